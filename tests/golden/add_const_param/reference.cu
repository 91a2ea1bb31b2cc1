struct Node { float weight; int next; };
__global__ void relax(Node *nodes, float w) {
    Node &node = nodes[threadIdx.x];
    node.weight = w;
}
