"""Hole fillers: the search tuner (default) and the LLM filler."""
