"""Checks of mediasim against references and against itself: the reference
simulator drivers (ns-2, ns-3), the TCP cross-check, the benchmarks and the
output-hash regression check."""
