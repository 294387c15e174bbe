"""The notebooks run headless, top to bottom (with smaller parameters)."""

import nbformat
from nbclient import NotebookClient
from testing_utils import OFFLINE_ENV, REPO


def test_demo_notebook_runs(tmp_path, monkeypatch):
    for key, value in OFFLINE_ENV.items():
        monkeypatch.setenv(key, value)
    nb = nbformat.read(REPO / "notebooks" / "demo.ipynb", as_version=4)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    params.source = (
        f"OUT = {str(tmp_path / 'nb')!r}\n"
        "TRAIN_ARGS = ['--max_steps', '30', '--eval_steps', '15', '--save_steps', '15', '--eval_max_samples', '10',"
        " '--max_new_tokens', '24', '--report_to', 'none']\n"
        "CORPUS_ARGS = ['--n-train', '3000', '--n-valid', '20', '--n-test', '20', '--n-gender-pairs', '20']\n"
        "LAUNCH = None\n"
    )
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(REPO / "notebooks")}}
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs)  # the learning curves
    assert (tmp_path / "nb" / "bias_report" / "metrics.json").is_file()
