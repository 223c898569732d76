"""Regression check: every output table of the examples and of the quick
studies is bit-identical to the stored baseline. A change meant to alter
results updates the baseline with ``scripts/output-hashes --update``."""

from mediasim.validation import output_hashes


def test_hashing_sees_a_one_bit_change():
    import numpy as np

    a = {"x": np.array([1.0, 2.0]), "name": ["a", "b"]}
    b = {"x": np.array([1.0, np.nextafter(2.0, 3.0)]), "name": ["a", "b"]}
    c = {"x": np.array([1.0, 2.0]), "name": ["a", "c"]}
    assert output_hashes.table_hash(a) != output_hashes.table_hash(b)
    assert output_hashes.table_hash(a) != output_hashes.table_hash(c)
    assert output_hashes.table_hash(a) == output_hashes.table_hash(dict(reversed(a.items())))


def test_every_output_table_matches_the_baseline():
    current = output_hashes.compute(workers=2)
    baseline = output_hashes.load_baseline()
    assert len(baseline) >= 80
    assert output_hashes.differences(current, baseline) == []
