# Two commands for a fresh machine: `make demo` (the main job) and `make test`.
# Each creates .venv and installs requirements on first use.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# DeepSpeed's CPU op, which the suite's DeepSpeed runs load (tests/deepspeed_ops.py), built once after the install.
DS_OPS := .cache/torch_extensions/.built
DEMO   ?= runs/demo
# Extra flags for the demo's steps, e.g. `make demo DEMO_ARGS="--max_steps 100"`.
CORPUS_ARGS ?=
DEMO_ARGS ?=
# The mitigation demo's corpus: feminine forms rare in its general training data (docs/bias_mitigation.md#the-demo).
SKEWED_CORPUS_ARGS := --n_train 20000 --feminine_scale 0.02

# Nothing here needs the Hugging Face Hub; say so, so that no library waits on the network.
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
export HF_EVALUATE_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false
# CPU training runs up to 1.8x faster on tcmalloc than on glibc's malloc (docs/training.md#cpu-speed): every
# command below starts on it where it is installed (Debian: libtcmalloc-minimal4); `make test TCMALLOC=` does not.
ARCH_LIB := /usr/lib/$(shell uname -m)-linux-gnu
TCMALLOC ?= $(firstword $(wildcard $(ARCH_LIB)/libtcmalloc_minimal.so.4 $(ARCH_LIB)/libtcmalloc.so.4 \
	/usr/lib64/libtcmalloc_minimal.so.4 /usr/local/lib/libtcmalloc_minimal.so.4))
ifneq ($(TCMALLOC),)
export LD_PRELOAD := $(strip $(TCMALLOC) $(LD_PRELOAD))
export TCMALLOC_LARGE_ALLOC_REPORT_THRESHOLD ?= 1099511627776
endif

.PHONY: demo demo-mitigate test test-all test-gpu lint clean

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -r requirements-dev.txt
	$(VENV)/bin/pip install -q --no-deps -e .
	touch $@

$(DS_OPS): $(STAMP)
	$(PY) tests/deepspeed_ops.py
	touch $@

demo: $(STAMP)  ## generate the demo corpus, train, translate, write the bias report
	$(PY) scripts/demo_corpus.py $(DEMO)_corpus $(CORPUS_ARGS)
	$(PY) scripts/train.py --config recipes/demo.yaml --data_dir $(DEMO)_corpus --output_dir $(DEMO) $(DEMO_ARGS)
	$(PY) scripts/translate.py --model $(DEMO)/final \
		--text "The doctor said that she was tired." \
		--text "The mechanic told me that she would come tonight." \
		--text "The engineer finished her report yesterday." --max_new_tokens 64
	$(PY) scripts/bias_report.py --mtgeneval_dir $(DEMO)_corpus/mt-geneval --split test --target_langs es \
		--model $(DEMO)/final --max_new_tokens 64 --batch_size 100 --out $(DEMO)/bias_report --update_card
	@echo "Done: model in $(DEMO)/final, curves in $(DEMO)/curves.png, bias report in $(DEMO)/bias_report/report.html"

demo-mitigate: $(STAMP)  ## a corpus with feminine forms rare, its model trained to convergence, mitigated beside a control
	$(PY) scripts/demo_corpus.py $(DEMO)_skewed_corpus $(SKEWED_CORPUS_ARGS)
	$(PY) scripts/train.py --config recipes/demo_skewed.yaml --data_dir $(DEMO)_skewed_corpus --output_dir $(DEMO)_skewed \
		$(DEMO_ARGS)
	$(PY) scripts/train.py --config recipes/demo_mitigate.yaml --data_dir $(DEMO)_skewed_corpus \
		--model_name_or_path $(DEMO)_skewed/final --gender_data $(DEMO)_skewed_corpus/mt-geneval --output_dir $(DEMO)_mitigate \
		$(DEMO_ARGS)
	@echo "Done: the verdict in $(DEMO)_mitigate/verdict/verdict.md, the mitigated model in $(DEMO)_mitigate/final"

# Two pytest-xdist workers, each test file on one of them (its module fixtures built once), in the order
# tests/conftest.py gives them (the longest launches first); the 25 slowest tests are listed at the end so that the
# time budget stays visible.
PYTEST := $(PY) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --durations=25

# Python caches compiled modules (its default; some environments turn it off): the suite's ~200 interpreters then
# compile the toolkit and pytest rewrites the tests once, not in every process.
test test-all: export PYTHONDONTWRITEBYTECODE :=

test: $(STAMP) $(DS_OPS)  ## the test suite (CPU: about 9 minutes on 2 cores, plus 3 to set up .venv; docs/testing.md)
	$(PYTEST)

test-all: $(STAMP) $(DS_OPS)  ## the test suite plus the slow end-to-end runs
	$(PYTEST) -m "slow or not slow"

test-gpu: $(STAMP)  ## the tests marked gpu: bf16 base model, no syncs, ZeRO-2/3 on one GPU, step benchmark
	@$(PY) -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 'make test-gpu: torch sees no CUDA GPU')"
	$(PY) -m pytest -q -m gpu -p no:cacheprovider

lint: $(STAMP)
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

clean:
	rm -rf runs .pytest_cache
