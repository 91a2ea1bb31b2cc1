/* klc-spec
kernel: bincount
sizes: {n: 33554432, num_classes: 1000}
verify_sizes:
  - {n: 1048576, num_classes: 1000}
  - {n: 100003, num_classes: 37}
  - {n: 777, num_classes: 1}
args:
  - {name: labels, shape: [n], role: in, init: "randint(0, num_classes)"}
  - {name: counts, shape: [num_classes], role: inout, init: "randint(0, 100)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n + 8 * num_classes
flops: 0
*/
// family: histogram
// style: int64 labels (long), int counters, early return, atomicAdd on int
// counts[c] += number of labels equal to c (class frequencies of a batch; labels in
// [0, num_classes)). num_classes is not an argument: the labels are known to be in range.
// bytes: labels read (8n), the counters read and written. flops: none.
__global__ void bincount(const long *labels, int *counts, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(counts + labels[i], 1);
}
