"""scikit-learn, LightGBM and XGBoost models exported to ONNX, through irtool and OpenVINO.

Fits a broad set of small estimators and pipelines (linear models, SVMs, trees and
forests, gradient boosting incl. HistGradientBoosting, naive Bayes, KNN, MLP, KMeans,
PCA, scalers, encoders, imputers, pipelines; LightGBM and XGBoost when installed),
exports each with skl2onnx (classifiers with ``zipmap=False``: ZipMap's maps cannot be
IR tensors) or onnxmltools, and prints one row per model, as
``bench/exporter_models.py`` does for its fixtures:

* **converts**: ``irtool.convert`` on the ``.onnx`` (or the first line of its error);
* **irtool**: irtool's runtime on the saved IR matches onnxruntime;
* **OV (irtool IR)**: OpenVINO's CPU runtime on irtool's IR matches onnxruntime;
* **OV frontend**: OpenVINO's own ONNX frontend matches onnxruntime, for comparison.

Needs the ``sklearn`` extra (scikit-learn, skl2onnx; onnxmltools, lightgbm, xgboost for
their rows): ``pip install -e '.[sklearn]'``. Every backend runs in a child process.

    python bench/sklearn_models.py [NAME ...] [--list] [--json FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from exporter_models import format_table, run_fixture

SEED = 0


def _data(kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Small deterministic training data: 3-class, 2-class, regression, counts."""
    rng = np.random.default_rng(SEED)
    x = rng.normal(size=(120, 5)).astype(np.float32)
    if kind == "multiclass":
        y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(int) + (x[:, 2] > 0.6).astype(int)
    elif kind == "binary":
        y = (x[:, 0] - x[:, 3] + 0.3 * rng.normal(size=120) > 0).astype(int)
    elif kind == "counts":
        x = rng.integers(0, 6, size=(120, 5)).astype(np.float32)
        y = (x[:, 0] + x[:, 1] > 5).astype(int)
    else:
        y = x @ np.array([1.5, -2.0, 0.5, 0.0, 1.0]) + 0.1 * rng.normal(size=120)
    return x, y


def _models() -> dict[str, tuple[str, Callable[[], object]]]:
    """name -> (data kind, estimator factory); imports stay inside the factories."""
    from sklearn import (
        cluster,
        decomposition,
        ensemble,
        impute,
        linear_model,
        naive_bayes,
        neighbors,
        neural_network,
        pipeline,
        preprocessing,
        svm,
        tree,
    )

    m = {
        "LogisticRegression": ("multiclass", lambda: linear_model.LogisticRegression()),
        "LogisticRegression_binary": ("binary", lambda: linear_model.LogisticRegression()),
        "RidgeClassifier": ("multiclass", lambda: linear_model.RidgeClassifier()),
        "SGDClassifier": ("multiclass", lambda: linear_model.SGDClassifier(random_state=0)),
        "LinearSVC": ("multiclass", lambda: svm.LinearSVC()),
        "SVC_rbf": ("multiclass", lambda: svm.SVC()),
        "SVC_probability": ("multiclass", lambda: svm.SVC(probability=True, random_state=0)),
        "SVC_binary_linear": ("binary", lambda: svm.SVC(kernel="linear")),
        "LinearRegression": ("regression", lambda: linear_model.LinearRegression()),
        "Ridge": ("regression", lambda: linear_model.Ridge()),
        "Lasso": ("regression", lambda: linear_model.Lasso(alpha=0.01)),
        "ElasticNet": ("regression", lambda: linear_model.ElasticNet(alpha=0.01)),
        "SVR": ("regression", lambda: svm.SVR()),
        "LinearSVR": ("regression", lambda: svm.LinearSVR(random_state=0)),
        "DecisionTreeClassifier": ("multiclass", lambda: tree.DecisionTreeClassifier(
            max_depth=6, random_state=0)),
        "DecisionTreeRegressor": ("regression", lambda: tree.DecisionTreeRegressor(
            max_depth=6, random_state=0)),
        "RandomForestClassifier": ("multiclass", lambda: ensemble.RandomForestClassifier(
            n_estimators=20, random_state=0)),
        "RandomForestClassifier_binary": ("binary", lambda: ensemble.RandomForestClassifier(
            n_estimators=20, random_state=0)),
        "RandomForestRegressor": ("regression", lambda: ensemble.RandomForestRegressor(
            n_estimators=20, random_state=0)),
        "ExtraTreesClassifier": ("multiclass", lambda: ensemble.ExtraTreesClassifier(
            n_estimators=20, random_state=0)),
        "ExtraTreesRegressor": ("regression", lambda: ensemble.ExtraTreesRegressor(
            n_estimators=20, random_state=0)),
        "GradientBoostingClassifier": ("multiclass", lambda: (
            ensemble.GradientBoostingClassifier(n_estimators=20, random_state=0))),
        "GradientBoostingClassifier_binary": ("binary", lambda: (
            ensemble.GradientBoostingClassifier(n_estimators=20, random_state=0))),
        "GradientBoostingRegressor": ("regression", lambda: (
            ensemble.GradientBoostingRegressor(n_estimators=20, random_state=0))),
        "HistGradientBoostingClassifier": ("multiclass", lambda: (
            ensemble.HistGradientBoostingClassifier(max_iter=20, random_state=0))),
        "HistGradientBoostingClassifier_binary": ("binary", lambda: (
            ensemble.HistGradientBoostingClassifier(max_iter=20, random_state=0))),
        "HistGradientBoostingRegressor": ("regression", lambda: (
            ensemble.HistGradientBoostingRegressor(max_iter=20, random_state=0))),
        "HistGradientBoostingRegressor_nan": ("regression", lambda: (
            ensemble.HistGradientBoostingRegressor(max_iter=20, random_state=0))),
        "AdaBoostClassifier": ("multiclass", lambda: ensemble.AdaBoostClassifier(
            n_estimators=10, random_state=0)),
        "GaussianNB": ("multiclass", lambda: naive_bayes.GaussianNB()),
        "BernoulliNB": ("binary", lambda: naive_bayes.BernoulliNB()),
        "MultinomialNB": ("counts", lambda: naive_bayes.MultinomialNB()),
        "KNeighborsClassifier": ("multiclass", lambda: neighbors.KNeighborsClassifier()),
        "KNeighborsRegressor": ("regression", lambda: neighbors.KNeighborsRegressor()),
        "MLPClassifier": ("multiclass", lambda: neural_network.MLPClassifier(
            hidden_layer_sizes=(16,), max_iter=300, random_state=0)),
        "MLPRegressor": ("regression", lambda: neural_network.MLPRegressor(
            hidden_layer_sizes=(16,), max_iter=300, random_state=0)),
        "KMeans": ("regression", lambda: cluster.KMeans(n_clusters=3, n_init=3,
                                                        random_state=0)),
        "PCA": ("regression", lambda: decomposition.PCA(n_components=3)),
        "TruncatedSVD": ("regression", lambda: decomposition.TruncatedSVD(n_components=3)),
        "StandardScaler": ("regression", lambda: preprocessing.StandardScaler()),
        "MinMaxScaler": ("regression", lambda: preprocessing.MinMaxScaler()),
        "RobustScaler": ("regression", lambda: preprocessing.RobustScaler()),
        "MaxAbsScaler": ("regression", lambda: preprocessing.MaxAbsScaler()),
        "Normalizer_l2": ("regression", lambda: preprocessing.Normalizer()),
        "Binarizer": ("regression", lambda: preprocessing.Binarizer(threshold=0.2)),
        "PolynomialFeatures": ("regression", lambda: preprocessing.PolynomialFeatures(2)),
        "OneHotEncoder": ("counts", lambda: preprocessing.OneHotEncoder(
            handle_unknown="ignore")),
        "SimpleImputer": ("regression", lambda: impute.SimpleImputer()),
        "KNNImputer": ("regression", lambda: impute.KNNImputer(n_neighbors=3)),
        "Pipeline_scaler_logreg": ("multiclass", lambda: pipeline.make_pipeline(
            preprocessing.StandardScaler(), linear_model.LogisticRegression())),
        "Pipeline_imputer_gbr": ("regression", lambda: pipeline.make_pipeline(
            impute.SimpleImputer(), ensemble.GradientBoostingRegressor(
                n_estimators=10, random_state=0))),
        "Pipeline_pca_svc": ("multiclass", lambda: pipeline.make_pipeline(
            decomposition.PCA(n_components=3), svm.SVC())),
        "Pipeline_onehot_rf": ("counts", lambda: pipeline.make_pipeline(
            preprocessing.OneHotEncoder(handle_unknown="ignore", sparse_output=False),
            ensemble.RandomForestClassifier(n_estimators=10, random_state=0))),
    }
    try:
        import lightgbm

        m["LGBMClassifier"] = ("multiclass", lambda: lightgbm.LGBMClassifier(
            n_estimators=10, verbose=-1))
        m["LGBMClassifier_binary"] = ("binary", lambda: lightgbm.LGBMClassifier(
            n_estimators=10, verbose=-1))
        m["LGBMRegressor"] = ("regression", lambda: lightgbm.LGBMRegressor(
            n_estimators=10, verbose=-1))
    except ImportError:
        pass
    try:
        import xgboost

        m["XGBClassifier"] = ("multiclass", lambda: xgboost.XGBClassifier(
            n_estimators=10, max_depth=3))
        m["XGBClassifier_binary"] = ("binary", lambda: xgboost.XGBClassifier(
            n_estimators=10, max_depth=3))
        m["XGBRegressor"] = ("regression", lambda: xgboost.XGBRegressor(
            n_estimators=10, max_depth=3))
    except ImportError:
        pass
    return m


@contextlib.contextmanager
def _bools_as_ints() -> Iterator[None]:
    """skl2onnx 1.20 hands HistGradientBoosting's missing-value tracks to onnx as numpy
    bools, which ``onnx.helper.make_attribute`` refuses for an ints attribute: give it ints."""
    original = onnx.helper.make_attribute

    def make_attribute(key: str, value: object, *args: object, **kwargs: object):
        if isinstance(value, (list, tuple)) and \
                any(isinstance(v, (bool, np.bool_)) for v in value):
            value = [int(v) for v in value]
        return original(key, value, *args, **kwargs)

    onnx.helper.make_attribute = make_attribute
    try:
        yield
    finally:
        onnx.helper.make_attribute = original


def _final(estimator: object) -> object:
    steps = getattr(estimator, "steps", None)
    return steps[-1][1] if steps else estimator


def export(name: str, kind: str, factory: Callable[[], object]
           ) -> tuple[onnx.ModelProto, str, np.ndarray]:
    """Fit, export; the model, its producer, and the rows to feed it."""
    x, y = _data(kind)
    estimator = factory()
    if name.endswith(("Imputer", "_nan")) or name.startswith("Pipeline_imputer"):
        x = x.copy()
        x[np.random.default_rng(1).random(x.shape) < 0.1] = np.nan
    estimator.fit(x, y)  # transformers ignore y
    feed = x[:16]
    module = type(_final(estimator)).__module__
    if module.startswith(("lightgbm", "xgboost")):
        from onnxmltools import convert_lightgbm, convert_xgboost
        from onnxmltools.convert.common.data_types import FloatTensorType

        convert = convert_lightgbm if module.startswith("lightgbm") else convert_xgboost
        types = [("X", FloatTensorType([None, x.shape[1]]))]
        extra = {"zipmap": False} if module.startswith("lightgbm") else {}
        model = convert(estimator, initial_types=types, target_opset=15, **extra)
        return model, "onnxmltools", feed
    from skl2onnx import to_onnx

    final = _final(estimator)
    options = {id(final): {"zipmap": False}} if hasattr(final, "classes_") else None
    with _bools_as_ints():
        try:
            model = to_onnx(estimator, x[:1], options=options, target_opset=18)
        except NameError:  # a classifier without ZipMap (LinearSVC) has no zipmap option
            model = to_onnx(estimator, x[:1], target_opset=18)
    return model, "skl2onnx", feed


def _export_row(name: str, kind: str, factory: Callable[[], object], tmp: Path
                ) -> dict | str:
    try:
        model, producer, feed = export(name, kind, factory)
    except Exception as err:  # an exporter's refusal is this row's reason
        return f"export failed: {type(err).__name__}: {str(err).splitlines()[0][:120]}"
    onnx.save(model, str(tmp / f"{name}.onnx"))
    inputs = [i.name for i in model.graph.input]
    np.savez(tmp / f"{name}.inputs.npz", **{inputs[0]: feed})
    return {"name": name, "producer": producer, "file": f"{name}.onnx",
            "inputs_file": f"{name}.inputs.npz"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="only these models (default: all)")
    parser.add_argument("--list", action="store_true", help="list the model names")
    parser.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")  # the estimators' deprecation chatter, not results
    try:
        models = _models()
    except ImportError as err:
        print(f"needs scikit-learn and skl2onnx (pip install -e '.[sklearn]'): {err}",
              file=sys.stderr)
        return 2
    if args.list:
        print("\n".join(models))
        return 0
    unknown = sorted(set(args.names) - set(models))
    if unknown:
        print(f"unknown model(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    rows, failed = [], []
    with tempfile.TemporaryDirectory(prefix="irtool-sklearn-") as tmp:
        for name, (kind, factory) in models.items():
            if args.names and name not in args.names:
                continue
            entry = _export_row(name, kind, factory, Path(tmp))
            if isinstance(entry, str):
                failed.append(f"{name}: {entry}")
            else:
                rows.append(run_fixture(entry, Path(tmp), folder=Path(tmp)))
            print(f"  {name}", file=sys.stderr, flush=True)
    print(format_table(rows, "model"))
    for line in failed:
        print(f"\n{line}")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
