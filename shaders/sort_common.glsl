// sort_common.glsl: key access shared by the radix sort kernels. Keys are 64-bit values stored as
// two uint words, low word first (for the forward pass: lo = depth bits, hi = tile id).

uint sort_count(uint n_push, uint count_index, uint capacity) {
  if (count_index == 0xffffffffu) return n_push;
  return min(counters[count_index], capacity);
}

uint sort_digit(uint i, uint shift) {
  uint w = shift < 32u ? keys_in[2u * i] : keys_in[2u * i + 1u];
  return (w >> (shift & 31u)) & uint(GS_RADIX - 1);
}
