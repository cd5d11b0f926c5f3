"""End-to-end training: a small CNN learns scikit-learn's bundled 8x8 digits with
retrograd's nn and optim alone, to over 95% test accuracy (about 98%; some 3 s on an idle
2-core machine)."""

import numpy
import pytest

import retrograd as torch
from retrograd import nn

datasets = pytest.importorskip("sklearn.datasets")
threadpoolctl = pytest.importorskip("threadpoolctl")  # a scikit-learn dependency


def _data():
    """A fixed 80/20 split of the 1,797 digits, pixels scaled to [0, 1]."""
    digits = datasets.load_digits()
    x = (digits.images / 16.0).astype(numpy.float32)[:, None]  # (n, 1, 8, 8)
    y = digits.target.astype(numpy.int64)
    order = numpy.random.default_rng(0).permutation(len(y))
    test, train = order[:360], order[360:]
    return (torch.tensor(x[train]), torch.tensor(y[train]),
            torch.tensor(x[test]), torch.tensor(y[test]))


def _model():
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # 16 x 4 x 4
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # 32 x 2 x 2
        nn.Flatten(), nn.Linear(128, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 10))


def test_cnn_learns_digits():
    # The matrices are tiny: BLAS threads only add synchronisation, which on a busy machine
    # (pytest -n 2 beside other work) made this test 10x slower.
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        _train_and_evaluate()


def _train_and_evaluate():
    torch.manual_seed(0)
    x_train, y_train, x_test, y_test = _data()
    model = _model()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    batch = 64
    for _ in range(12):
        model.train()
        perm = torch.randperm(len(y_train))
        for i in range(0, len(y_train), batch):
            idx = perm[i:i + batch]
            optimizer.zero_grad()
            loss = loss_fn(model(x_train[idx]), y_train[idx])
            loss.backward()
            optimizer.step()
    model.eval()
    with torch.no_grad():
        accuracy = (model(x_test).argmax(dim=1) == y_test).float().mean().item()
    assert loss.item() < 0.5
    assert accuracy >= 0.95, f"test accuracy {accuracy:.3f}"
