"""Loss and accuracy curves of a run (matplotlib, optional)."""

from __future__ import annotations

from typing import Iterable, Optional


def plot(metrics: Iterable, path: Optional[str] = None, title: str = "training"):
    """Draws the training loss per step (and the validation loss of a text
    program) and the test accuracy per epoch. Writes a PNG to `path` when
    given; returns the matplotlib figure. Needs matplotlib."""
    try:
        import matplotlib
        if path is not None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError("synplexum.plot needs matplotlib "
                          "(Debian: python3-matplotlib)") from e
    records = list(metrics)
    steps = [(m.step, m.loss) for m in records if m.kind == "step" and m.loss is not None]
    evals = [(m.step, m.val_loss) for m in records
             if m.kind == "eval" and m.val_loss is not None]
    epochs = [(m.epoch, m.test_accuracy) for m in records
              if m.kind == "epoch" and m.test_accuracy is not None]
    panels = 2 if epochs else 1
    fig, axes = plt.subplots(1, panels, figsize=(6 * panels, 4), squeeze=False)
    loss_axis = axes[0][0]
    if steps:
        loss_axis.plot([s for s, _ in steps], [l for _, l in steps], lw=0.8,
                       label="training loss")
    if evals:
        loss_axis.plot([s for s, _ in evals], [v for _, v in evals], "o-",
                       label="validation loss")
    loss_axis.set_xlabel("update step")
    loss_axis.set_ylabel("loss")
    loss_axis.set_title(title)
    loss_axis.legend()
    if epochs:
        acc_axis = axes[0][1]
        acc_axis.plot([e for e, _ in epochs], [a for _, a in epochs], "o-")
        acc_axis.set_xlabel("epoch")
        from matplotlib.ticker import MaxNLocator
        acc_axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        acc_axis.set_ylabel("test accuracy")
        acc_axis.set_title("test accuracy")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig
