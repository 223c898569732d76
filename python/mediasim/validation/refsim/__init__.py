"""Scripts for the reference simulators (ns-2, ns-3), used only by the
cross-check and side-by-side commands; never imported by the engine."""
