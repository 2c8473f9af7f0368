"""Train the robustness benchmark's models here (no download) and export them to ONNX.

Dataset: scikit-learn's Wisconsin breast-cancer data (``load_breast_cancer``, 569 rows, binary),
six of its features (below), each scaled to [0, 1] by the training split's min and max (test
points clipped into [0, 1]). Split 80/20 with ``SEED``. Models, both with ``SEED``:

* ``mlp.onnx``: ``MLPClassifier(hidden_layer_sizes=(32, 32, 32), activation="relu")`` — a 3x32
  ReLU network;
* ``forest.onnx``: ``RandomForestClassifier(n_estimators=20, max_depth=8)``.

Also written: ``train.csv`` (the scaled training rows, for ``tamp prior fit``), ``points.csv``
(the first 100 scaled test rows: the benchmark's points) and ``models.json`` (seeds, features,
accuracies). Run from the repository root: ``python benchmarks/models/train.py``.
"""

from __future__ import annotations

import csv
import json
import os
import warnings

import numpy as np
from skl2onnx import to_onnx
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

SEED = 20261125
HERE = os.path.dirname(os.path.abspath(__file__))
FEATURES = ["mean radius", "mean texture", "mean smoothness", "mean compactness", "mean concavity", "mean symmetry"]
NAMES = ["radius", "texture", "smoothness", "compactness", "concavity", "symmetry"]
N_POINTS = 100


def _write_csv(path: str, rows: np.ndarray) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(NAMES)
        for r in rows:
            w.writerow([repr(float(v)) for v in r])


def main() -> None:
    data = load_breast_cancer()
    cols = [list(data.feature_names).index(f) for f in FEATURES]
    X, y = data.data[:, cols], data.target
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=SEED, stratify=y)
    lo, hi = Xtr.min(axis=0), Xtr.max(axis=0)
    # float32 values, so that the ONNX model's cast of its input is exact and the CSV is what it reads
    Xtr = ((Xtr - lo) / (hi - lo)).astype(np.float32)
    Xte = np.clip((Xte - lo) / (hi - lo), 0, 1).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mlp = MLPClassifier(hidden_layer_sizes=(32, 32, 32), activation="relu", max_iter=2000, random_state=SEED)
        mlp.fit(Xtr, ytr)
        forest = RandomForestClassifier(n_estimators=20, max_depth=8, random_state=SEED).fit(Xtr, ytr)
    info = {"dataset": "sklearn.datasets.load_breast_cancer", "features": dict(zip(NAMES, FEATURES)), "seed": SEED}
    for name, model in (("mlp", mlp), ("forest", forest)):
        onx = to_onnx(model, Xtr[:1], options={id(model): {"zipmap": False}}, target_opset=15)
        with open(os.path.join(HERE, f"{name}.onnx"), "wb") as fh:
            fh.write(onx.SerializeToString())
        info[name] = {
            "train_accuracy": round(float(model.score(Xtr, ytr)), 4),
            "test_accuracy": round(float(model.score(Xte, yte)), 4),
        }
    _write_csv(os.path.join(HERE, "train.csv"), Xtr)
    _write_csv(os.path.join(HERE, "points.csv"), Xte[:N_POINTS])
    with open(os.path.join(HERE, "models.json"), "w") as fh:
        json.dump(info, fh, indent=1)
        fh.write("\n")
    print(json.dumps(info, indent=1))


if __name__ == "__main__":
    main()
