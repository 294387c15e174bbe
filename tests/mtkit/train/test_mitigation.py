"""A gender-bias mitigation run (recipes/demo_mitigate.yaml) from the suite's small demo model, with its control arm:
the verdict's figures of the three models recomputed from the saved translations with bias_eval, sacreBLEU and
torch's binomial called directly; the control trained on the replay alone for as many updates; the checkpoint kept by
the rule, in both arms; the card carries the before/after and the verdict; the pull's value and gradient against the
formula; every Hub family's stand-in mitigated for a few updates."""

import json

import numpy as np
import pytest
import sacrebleu
import torch
from families import FAMILIES
from testing_utils import MTGENEVAL, REPO, fresh_run_state, launch, make_demo, train_in_process

from bias_eval.mtgeneval.scoring import score_language
from mtkit.config import parse_config
from mtkit.data.mtgeneval import load_mtgeneval
from mtkit.errors import UserError
from mtkit.train.mitigation import Mitigation, check_pull
from mtkit.train.trainer import Trainer
from mtkit.train.weights import checkpoint_weights

RECIPE = str(REPO / "recipes" / "demo_mitigate.yaml")
#: greedy decoding (the recipe's beam of 4 decodes the same sentences four times over): what these tests check is
#: where the translations go and what is computed from them, not how they are searched
SMALL = ("--max_steps", "4", "--eval_steps", "2", "--save_steps", "2", "--eval_max_samples", "10",
         "--max_new_tokens", "12", "--num_beams", "1", "--disable_tqdm", "--max_bleu_drop", "0")  # fmt: skip


def jsonl(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def mitigated(demo_run, tmp_path_factory):
    """The demo recipe's mitigation of the small demo model, 4 updates, evaluated every 2, budget 0 BLEU."""
    corpus, out = demo_run.parent / "demo_corpus", tmp_path_factory.mktemp("mitigate") / "run"
    res = train_in_process("--config", RECIPE, "--data_dir", str(corpus), "--model_name_or_path",
                           str(demo_run / "final"), "--gender_data", str(corpus / "mt-geneval"), "--output_dir",
                           str(out), *SMALL)  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    return out


def hypotheses(details: list[dict]) -> dict[str, list[str]]:
    return {g: [row[f"hypothesis_{g}"] for row in details] for g in ("feminine", "masculine")}


def test_verdict_figures_recomputed_from_the_saved_translations(mitigated) -> None:
    verdict = json.loads((mitigated / "verdict" / "verdict.json").read_text())
    data = load_mtgeneval(mitigated / "verdict" / "pairs", "test", ["es"]).languages["es"]
    assert verdict["models"] == ["start", "control", "mitigated"] and verdict["headline"] == "mitigated_vs_control"
    sides = {"start": ("mitigated_vs_start", "before"), "control": ("mitigated_vs_control", "before"),
             "mitigated": ("mitigated_vs_start", "after")}  # fmt: skip
    for name, (comparison, when) in sides.items():
        figures = verdict[comparison]["languages"]["es"]
        details = jsonl(mitigated / "verdict" / name / "es.details.jsonl")
        assert [row["source_feminine"] for row in details] == data.feminine.sources
        direct = score_language(data, hypotheses(details), samples=0, seed=0).metrics
        for key in ("accuracy_feminine", "accuracy_masculine", "accuracy_pair", "strict_accuracy_feminine",
                    "accuracy_gap", "strict_accuracy_gap", "bleu_gap"):  # fmt: skip
            assert np.isclose(figures[key][when], direct[key]), (key, name)
            assert np.isclose(verdict[name]["languages"]["es"][key], direct[key]), (key, name)
    for comparison, (b, a) in (("mitigated_vs_start", ("start", "mitigated")),
                               ("mitigated_vs_control", ("control", "mitigated"))):  # fmt: skip
        before, after = (jsonl(mitigated / "verdict" / n / "es.details.jsonl") for n in (b, a))
        x = sum(p["correct_feminine"] is True and q["correct_feminine"] is False for p, q in zip(before, after))
        y = sum(p["correct_feminine"] is False and q["correct_feminine"] is True for p, q in zip(before, after))
        tail = torch.distributions.Binomial(x + y, torch.tensor(0.5)).log_prob(torch.arange(min(x, y) + 1.0)).exp()
        expected = min(1.0, 2 * float(tail.sum())) if x + y else 1.0  # McNemar's exact test, from torch's binomial
        assert np.isclose(verdict[comparison]["languages"]["es"]["accuracy_feminine"]["p_value"], expected)
    start, end = (jsonl(mitigated / "translations" / f"{n}.jsonl") for n in ("test-start", "test"))
    control = jsonl(mitigated / "control" / "translations" / "test.jsonl")
    refs = [[r["target"] for r in start]]
    for key, before in (("general_cost", start), ("general_cost_vs_control", control)):
        cost = verdict[key]["bleu"]
        assert np.isclose(cost["before"], sacrebleu.corpus_bleu([r["hypothesis"] for r in before], refs).score)
        assert np.isclose(cost["after"], sacrebleu.corpus_bleu([r["hypothesis"] for r in end], refs).score)
    assert verdict["leakage"]["shared_sentences"] == 0  # the verdict pairs are held out of the tuning pairs
    leak, parts = verdict["leakage"], verdict["words"]
    assert leak["gendered_words_all_tuned"] + leak["gendered_words_unseen"] == leak["sentences_with_gendered_words"]
    assert parts["unseen"]["pairs"] > 0 and sum(p["pairs"] for p in parts.values() if p) == len(data.feminine.sources)


def read(run, name: str) -> dict:
    return json.loads((run / name).read_text())


def test_the_control_arm_trains_the_same_start_as_long_on_the_replay_alone(mitigated) -> None:
    """``control/``: the mitigated run's config but for its folder and its training data, which is the mitigated
    run's minus the tuning pairs (the same replay rows), as many updates; its checkpoint chosen by the same rule."""
    import yaml

    control = mitigated / "control"
    arms = [yaml.safe_load((run / "config.yaml").read_text()) for run in (mitigated, control)]
    assert [arm["train"].pop("output_dir") for arm in arms] == [str(mitigated), str(control)]
    assert [arm["mitigation"].pop("tuning_pairs") for arm in arms] == [True, False]
    assert [arm["mitigation"].pop("control") for arm in arms] == ["replay", "none"]
    assert arms[0] == arms[1]  # the same start, schedule, seed, pulls and budgets
    counts = [read(run, "data_counts.json") for run in (mitigated, control)]
    assert counts[1]["train"]["es"] == counts[0]["train"]["es"] - counts[0]["tuning"]["es"] > 0
    results = [read(run, "results.json") for run in (mitigated, control)]
    assert results[0]["step"] == results[1]["step"] == 4 and (control / "final" / "config.json").is_file()
    records = [r for r in jsonl(control / "metrics.jsonl") if "valid_general_bleu" in r]
    assert [r["step"] for r in records] == [0, 2, 4] and results[1]["best_step"] == rule(records)[0]["step"]


def rule(records: list[dict], max_accuracy_drop: float = 0.02) -> tuple[dict, str, list[dict]]:
    """The recipe's choice (--max_bleu_drop 0 here, strict accuracy: the default) computed directly: the kept record,
    the worse-served gender and the records within both budgets."""
    start = records[0]
    f, m = start["valid_strict_accuracy_feminine"], start["valid_strict_accuracy_masculine"]
    worse, better = ("feminine", "masculine") if f <= m else ("masculine", "feminine")
    acc = {g: f"valid_strict_accuracy_{g}" for g in (worse, better)}
    allowed = [r for r in records if r["valid_general_bleu"] >= start["valid_general_bleu"]
               and r[acc[better]] >= start[acc[better]] - max_accuracy_drop]  # fmt: skip
    best = max(allowed, key=lambda r: (r[acc[worse]], r["valid_accuracy_pair"], -r["valid_loss"], -r["step"]))
    return best, worse, allowed


def test_the_kept_checkpoint_raises_the_worse_served_gender_within_both_budgets(mitigated) -> None:
    """The trainer's choice is the rule's over the run's evaluations (--max_bleu_drop 0, --max_accuracy_drop 2)."""
    records = [r for r in jsonl(mitigated / "metrics.jsonl") if "valid_general_bleu" in r]
    assert [r["step"] for r in records] == [0, 2, 4]
    best, worse, allowed = rule(records)
    assert read(mitigated, "results.json")["best_step"] == best["step"]
    budget = read(mitigated / "verdict", "verdict.json")["budget"]
    assert budget["chosen_step"] == best["step"] and budget["worse_served"] == worse
    assert budget["within_budget_steps"] == [r["step"] for r in allowed] and "worse" in budget["rule"]
    assert budget["measure"] == "strict_accuracy" and "the best strict accuracy of the gender" in budget["rule"]


def test_the_card_carries_the_before_and_after(mitigated) -> None:
    card = (mitigated / "final" / "README.md").read_text(encoding="utf-8")
    assert "Gender bias before and after" in card and "Gender-bias mitigation: verdict" in card
    assert "General quality cost" in card and card.index("before and after") < card.index("mitigation: verdict")
    page = (mitigated / "verdict" / "verdict.md").read_text(encoding="utf-8")
    assert page.split("\n")[2] in card and "| figure | start [95% CI] | control [95% CI] |" in card  # the summary


def check_the_gap_is_bias(verdict: dict, seed: int) -> None:
    """A demo verdict as docs/bias_mitigation.md#the-demo claims it, of the accuracy the verdict judges (strict, the
    default): the control's change of its gap inside noise, the gap's size narrowed beyond noise against the control,
    the gender the start served worse up beyond noise, the better-served one not down beyond noise, the kept
    checkpoint's general BLEU within its budget."""
    control, own, measure = verdict["control_vs_start"]["overall"], verdict["mitigated_vs_control"]["overall"], \
        verdict["measure"]  # fmt: skip
    assert measure == "strict_accuracy", seed
    for key in (f"{measure}_gap", f"{measure}_gap_size"):
        low, high = control[key]["change_ci95"]
        assert low <= 0 <= high and control[key]["p_value"] >= 0.05, (seed, "control", key, control[key])
    assert own["gap_outcome"] == "narrowed", (seed, own[f"{measure}_gap"], own[f"{measure}_gap_size"])
    start_gap = verdict["mitigated_vs_start"]["overall"][f"{measure}_gap"]["before"]
    worse, better = ("feminine", "masculine") if start_gap > 0 else ("masculine", "feminine")
    up, down = own[f"{measure}_{worse}"], own[f"{measure}_{better}"]
    assert up["change"] > 0 and up["p_value"] < 0.05, (seed, worse, up)
    assert not (down["change"] < 0 and down["p_value"] < 0.05), (seed, better, down)
    budget = verdict["budget"]
    assert budget["chosen_valid_general_bleu"] >= budget["start_valid_general_bleu"] - budget["max_bleu_drop"], seed
    assert verdict["over_correction"] is None and verdict["leakage"]["shared_sentences"] == 0, seed


@pytest.mark.slow  # make demo-mitigate (a 20,000-pair corpus, 1,500 updates, the mitigation) and a second seed's
# mitigation: 20 to 40 minutes on 2 shared cores; the default tier keeps the small run of `mitigated` above
def test_the_demo_gap_is_bias_that_the_mitigation_narrows_and_the_control_does_not(tmp_path) -> None:
    """``make demo-mitigate`` as a user runs it (seed 1), then the recipe again with seed 2 (other tuning, selection
    and verdict pairs, another replay sample) from the same start; the start trained until its validation loss is
    flat (the last 250 updates lower it by less than 10%)."""
    res = make_demo(tmp_path / "demo", "", "", timeout=3600, target="demo-mitigate")
    assert res.returncode == 0, (res.stdout[-3000:], res.stderr[-3000:])
    start, corpus = tmp_path / "demo_skewed", tmp_path / "demo_skewed_corpus"
    losses = [r["valid_loss"] for r in jsonl(start / "metrics.jsonl") if "valid_loss" in r]
    assert len(losses) >= 4 and losses[-1] > 0.9 * losses[-2], losses
    seed2 = tmp_path / "mitigate_seed2"
    res = train_in_process("--config", RECIPE, "--data_dir", str(corpus), "--model_name_or_path", str(start / "final"),
                           "--gender_data", str(corpus / "mt-geneval"), "--output_dir", str(seed2), "--seed", "2",
                           "--disable_tqdm")  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    for seed, run in ((1, tmp_path / "demo_mitigate"), (2, seed2)):
        check_the_gap_is_bias(json.loads((run / "verdict" / "verdict.json").read_text()), seed)


@pytest.mark.parametrize(
    ("flags", "named"),
    [(("--load_best_model_at_end", "false"), "--load_best_model_at_end false"),
     (("--average_last_epochs", "2"), "--average_last_epochs 2")],
)  # fmt: skip
def test_a_mitigation_that_would_export_other_weights_than_its_budget_kept_is_refused(tmp_path, flags, named) -> None:
    """The last or averaged weights were never checked against the BLEU budget: refused in one line at launch, before
    the model is even looked at and with nothing written (the same run without the flag gets past this check)."""
    from testing_utils import script_in_process

    from mtkit.cli.train import main

    out = tmp_path / "run"
    args = ("--config", RECIPE, "--model_name_or_path", str(tmp_path / "start"), "--gender_data", str(tmp_path),
            "--output_dir", str(out))  # fmt: skip
    res = script_in_process(main, *args, *flags)
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith(f"error: {named}: a mitigation exports the update its BLEU budget kept"), res.stderr
    assert not out.exists()
    plain = script_in_process(main, *args)  # refused later, for the missing model
    assert plain.returncode == 2 and "start" in plain.stderr and named not in plain.stderr


def test_pull_toward_the_start_is_the_squared_distance(tmp_path) -> None:
    cfg = parse_config(["--gender_data", "x", "--l2_to_start", "0.3"])
    model = torch.nn.Linear(3, 2)
    start = [p.detach().clone() for p in model.parameters()]
    pull = Mitigation(cfg, model, tmp_path)
    assert float(pull.pull()) == 0.0
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p))
    value = pull.pull()
    value.backward()
    assert np.isclose(float(value), 0.3 * sum(float(((p - s) ** 2).sum()) for p, s in zip(model.parameters(), start)))
    for p, s in zip(model.parameters(), start):
        assert torch.allclose(p.grad, 2 * 0.3 * (p.detach() - s))
    off = Mitigation(parse_config([]), model, tmp_path)
    assert off.pull() == 0.0 and off.chooses({}, None, True) and off.scores(None, 0) == {}
    with pytest.raises(UserError, match="--l2_to_start: not available with DeepSpeed or FSDP"):
        check_pull(cfg, sharded=True)
    check_pull(cfg, sharded=False)
    check_pull(parse_config(["--gender_data", "x"]), sharded=True)  # no pull: sharded weights are fine


#: two updates of 8 sentences a batch, no dropout, a constant rate, Adam with epsilon 1 (its step about rate x
#: gradient, not the sign of it): an update depends on its sentences only
TWO_UPDATES = ("--max_steps", "2", "--save_steps", "2", "--eval_steps", "100", "--max_tokens", "100000", "--dropout",
               "0", "--learning_rate", "1", "--lr_scheduler_type", "constant",
               "--adam_epsilon", "1", "--warmup_steps", "0", "--eval_max_samples", "4", "--max_new_tokens", "4",
               "--num_beams", "1", "--disable_tqdm", "--max_bleu_drop", "100", "--test_split", "none")  # fmt: skip


def second_update(run, start: dict[str, torch.Tensor]) -> torch.Tensor:
    """How far update 2's weights (``checkpoints/step-0000002``) moved from the start, as one vector."""
    weights, _ = checkpoint_weights(run / "checkpoints" / "step-0000002")
    return torch.cat([(weights[k].float() - start[k].float()).flatten() for k in sorted(start) if k in weights])


@pytest.mark.slow  # a 3-process DDP launch and two runs in the test process, each with its verdict (50 s): the
# default tier keeps N processes = 1 accumulating at 2 (tests/mtkit/train/test_trainer.py), the pull's own formula
# (below) and a 3-process launch (ZeRO-3's resharded resume, its evaluation dealt across the 3: test_reshard.py)
def test_three_processes_mitigate_as_one_process_accumulating_their_batches(demo_run, mitigated, tmp_path) -> None:
    """Under DDP every process adds the L2 pull to its loss and DDP averages the gradients, so the pull counts once
    per update, and distillation is one more per-token loss: 3 processes holding one batch each equal 1 process
    accumulating 3, over two updates (the second pulled by L2: the weights have left the start). Without the pulls,
    the second update differs far beyond the tolerance, so the comparison sees them."""
    from safetensors.torch import load_file

    corpus = demo_run.parent / "demo_corpus"
    pairs = json.loads((mitigated / "data_counts.json").read_text())["train"]["es"]  # the same recipe's training data
    size = next(m for m in range(8, 64) if -(-pairs // m) % 3 == 0)  # batches that 3 processes share evenly
    # --control none: this test's subject is the updates of one arm (the default tier's control run is `mitigated`)
    common = ["--max_sentences", str(size), "--config", RECIPE, "--data_dir", str(corpus), "--model_name_or_path",
              str(demo_run / "final"), "--gender_data", str(corpus / "mt-geneval"), *TWO_UPDATES, "--l2_to_start", "1",
              "--distill_to_start", "0.5", "--control", "none"]  # fmt: skip
    one, three, loose = tmp_path / "one", tmp_path / "three", tmp_path / "loose"
    res = train_in_process(*common, "--output_dir", str(one), "--gradient_accumulation_steps", "3")
    assert res.returncode == 0, res.stderr[-3000:]
    res = launch("cpu_ddp", *common, "--output_dir", str(three), processes=3)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "3 process(es)" in res.stdout
    with fresh_run_state():  # the trainer alone: this run's updates are looked at, not its verdict
        Trainer(parse_config([*common, "--output_dir", str(loose), "--gradient_accumulation_steps", "3",
                              "--l2_to_start", "0", "--distill_to_start", "0"])).fit()  # fmt: skip
    start = load_file(demo_run / "final" / "model.safetensors")
    d1, d3, d0 = (second_update(run, start) for run in (one, three, loose))
    assert d1.norm() > 0 and (d3 - d1).norm() / d1.norm() < 1e-4
    assert (d0 - d1).norm() / d1.norm() > 1e-2  # the pulls changed the updates
    verdicts = [json.loads((run / "verdict" / "verdict.json").read_text()) for run in (one, three)]
    assert verdicts[0]["mitigated_vs_start"] == verdicts[1]["mitigated_vs_start"]  # decoded by 1 process or by 3


@pytest.mark.slow  # the default tier keeps the control arm in one process (`mitigated`)
def test_two_processes_train_the_control_arm_after_the_mitigated_one(demo_run, tmp_path) -> None:
    """Under DDP the mitigated run ends its process group; the control arm starts one of its own on every process
    (keys under their own prefix in the launcher's store), trains to the end and is judged."""
    corpus, out = demo_run.parent / "demo_corpus", tmp_path / "run"
    res = launch("cpu_ddp", "--config", RECIPE, "--data_dir", str(corpus), "--model_name_or_path",
                 str(demo_run / "final"), "--gender_data", str(corpus / "mt-geneval"), "--output_dir", str(out),
                 *SMALL, processes=2)  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert read(out / "control", "results.json")["step"] == 4 and "2 process(es)" in res.stdout
    verdict = read(out / "verdict", "verdict.json")
    assert verdict["models"] == ["start", "control", "mitigated"] and verdict["mitigated_vs_control"]["overall"]


class Wrapped(torch.nn.Module):
    """A stand-in for DDP's wrapper: the model is its ``.module``."""

    def __init__(self, module: torch.nn.Module) -> None:
        super().__init__()
        self.module = module


def test_distillation_learns_from_a_frozen_copy_of_the_start(tmp_path) -> None:
    cfg = parse_config(["--gender_data", "x", "--distill_to_start", "0.4"])
    model = torch.nn.Linear(3, 2)
    start = model.weight.detach().clone()
    mitigation = Mitigation(cfg, Wrapped(model), tmp_path)
    copy = mitigation.teacher.model
    assert mitigation.teacher.weight == 0.4 and type(copy) is torch.nn.Linear and copy is not model
    assert not copy.training and not any(p.requires_grad for p in copy.parameters())
    with torch.no_grad():
        model.weight.add_(1.0)
    assert torch.equal(copy.weight, start) and mitigation.pull() == 0.0  # the start's weights; no L2 pull asked
    assert Mitigation(parse_config(["--gender_data", "x"]), model, tmp_path).teacher is None
    with pytest.raises(UserError, match="--distill_to_start: not available with DeepSpeed or FSDP"):
        check_pull(cfg, sharded=True)


def gender_table(path, lang: str, lines: slice) -> str:
    """MT-GenEval dev pairs of ``lang`` as a table: one feminine and one masculine row per ID."""
    rows = []
    for gender in ("feminine", "masculine"):
        stem = MTGENEVAL / "sentences" / "dev" / f"geneval-sentences-{gender}-dev.en_{lang}"
        sources, targets = (stem.with_name(f"{stem.name}.{s}").read_text().splitlines()[lines] for s in ("en", lang))
        rows += [{"ID": str(i), "gender": gender, "source": s, "target": t, "language_pair": f"en-{lang}"}
                 for i, (s, t) in enumerate(zip(sources, targets))]  # fmt: skip
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return str(path)


#: the default tier keeps NLLB (a forced target-language token, the most involved path); the other families run in
#: the slow tier (each 20 to 40 s on 2 CPU cores)
SLOW_FAMILIES = ("marian", "marian_multi", "m2m100", "mbart50", "mt5", "flan_t5")


@pytest.mark.parametrize(
    "family", [pytest.param(f, marks=pytest.mark.slow) if f in SLOW_FAMILIES else f for f in FAMILIES]
)
def test_every_family_runs_the_mitigation_recipe(family, family_dir, tmp_path) -> None:
    lang = "de" if family == "marian" else "es"  # one-target Marian's stand-in translates into German
    table = gender_table(tmp_path / "pairs.jsonl", lang, slice(0, 16))
    general = gender_table(tmp_path / "general.jsonl", lang, slice(100, 160))  # other sentences: the general data
    out = tmp_path / "run"
    res = train_in_process(
        "--train_file", general, "--target_lang", lang, "--model_name_or_path", str(family_dir(family)),
        "--gender_data", table, "--l2_to_start", "0.01", "--distill_to_start", "0.3", "--output_dir", str(out),
        "--max_steps", "1", "--eval_steps", "1", "--eval_max_samples", "8", "--max_new_tokens", "4", "--num_beams", "1",
        "--eval_batch_size", "8", "--report_to", "none", "--disable_tqdm", "--test_split", "none",
        "--mixed_precision", "no", "--learning_rate", "1e-3", "--max_tokens", "1024",
        "--metric_for_best_model", "accuracy_pair", "--control", "none",  # the control arm: the demo run above
        *(("--prompt", "t5") if family == "flan_t5" else ()),
        *(("--lora_r", "4") if family == "nllb" else ()),  # LoRA too: the pulls then hold the adapters (and a copy)
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    steps = [r["step"] for r in jsonl(out / "metrics.jsonl") if "valid_general_bleu" in r]
    assert steps == [0, 1]  # the start (the budget's reference) and the update
    verdict = json.loads((out / "verdict" / "verdict.json").read_text())
    assert list(verdict["mitigated_vs_start"]["languages"]) == [lang] and verdict["general_cost"] is None
    assert verdict["control"] is None and "cannot separate the mitigation from further training" in verdict["summary"]
    assert verdict["leakage"]["verdict_sentences"] == 2 * round(0.4 * 16)
    assert "Gender-bias mitigation: verdict" in (out / "final" / "README.md").read_text(encoding="utf-8")
    assert (out / "final" / "config.json").is_file()  # LoRA's adapters merged: a plain model folder


def test_a_gender_table_without_a_complete_pair_is_refused_before_anything_is_written(tiny_t5, tmp_path) -> None:
    pairs, general = tmp_path / "odd.csv", tmp_path / "general.csv"
    pairs.write_text("ID,source,target,gender\n1,She came.,Vino.,f\n1,She came.,Vino.,f\n1,He came.,Vino.,m\n"
                     "2,He left.,Se fue.,m\n", encoding="utf-8")  # fmt: skip
    general.write_text("source,target\n" + "".join(f"A {i}.,B {i}.\n" for i in range(20)), encoding="utf-8")
    out = tmp_path / "run"
    res = train_in_process("--train_file", str(general), "--target_lang", "es", "--model_name_or_path", str(tiny_t5),
                           "--prompt", "t5", "--gender_data", str(pairs), "--output_dir", str(out),
                           "--report_to", "none")  # fmt: skip
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert res.returncode == 2 and errors == [
        f"error: --gender_data {pairs}: no complete pair (a feminine and a masculine row sharing an ID, and no other "
        "row)"
    ]
    assert not out.exists()
