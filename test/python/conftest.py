"""pytest setup: the package is imported from the build tree
(PYTHONPATH=<build>/python, set by the ctest `python` test)."""
import os

import pytest


@pytest.fixture(scope="session")
def src_root():
    return os.environ.get("SYNPL_SOURCE_DIR",
                          os.path.dirname(os.path.dirname(os.path.dirname(__file__))))


@pytest.fixture(scope="session")
def trained(tmp_path_factory, src_root):
    """The Fashion-MNIST spec compiled once, and a short run's metrics."""
    import synplexum
    out = tmp_path_factory.mktemp("train") / "train"
    program = synplexum.compile(os.path.join(src_root, "examples/fashion_mnist/fashion_mnist.syn"),
                                str(out))
    run = program.train(epochs=1, steps=6, eval_batches=2, threads=1)
    records = list(run)
    return program, run, records
