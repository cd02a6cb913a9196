"""Regenerate ``alarm_sample.npz``, the ALARM samples that notebook 03 reads.

The ALARM network (Beinlich, Suermondt, Chavez and Cooper 1989: 37 categorical variables
with 2-4 states, 46 arcs) ships inside the ``pgmpy`` wheel. This script reads that bundled
copy and draws 20,000 rows with pgmpy's forward sampler (seed 0). The result is committed so
that the notebook, and the test that runs it, need neither pgmpy nor a download::

    python -m pip install "pgmpy>=1.1,<1.3"
    python notebooks/data/make_alarm_sample.py

Fields of the ``.npz``: ``X`` (20000, 37) uint8 category codes in the network's own state
order; ``names`` (37,) variable names, sorted; ``n_categories`` (37,) domain sizes (the public
schema); ``skeleton`` (46, 2) the network's arcs as sorted index pairs.
"""
import gzip
import os
import warnings
from importlib.resources import files

import numpy as np

N_ROWS = 20_000


def main():
    warnings.filterwarnings("ignore", category=FutureWarning)  # pgmpy's deprecation notices
    from pgmpy.readwrite import BIFReader
    from pgmpy.sampling import BayesianModelSampling

    bif = files("pgmpy.utils") / "example_models" / "alarm.bif.gz"
    model = BIFReader(string=gzip.decompress(bif.read_bytes()).decode("utf-8")).get_model()
    names = sorted(model.nodes())
    states = {v: list(model.get_cpds(v).state_names[v]) for v in names}
    df = BayesianModelSampling(model).forward_sample(size=N_ROWS, seed=0, show_progress=False)
    X = np.column_stack([df[v].map({s: i for i, s in enumerate(states[v])}).to_numpy() for v in names])
    idx = {v: i for i, v in enumerate(names)}
    skeleton = sorted(tuple(sorted((idx[a], idx[b]))) for a, b in model.edges())
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "alarm_sample.npz")
    np.savez_compressed(out, X=X.astype(np.uint8), names=np.array(names),
                        n_categories=np.array([len(states[v]) for v in names], dtype=np.int64),
                        skeleton=np.array(skeleton, dtype=np.int64))
    print(f"wrote {out}: {X.shape[0]} rows x {X.shape[1]} attributes")


if __name__ == "__main__":
    main()
