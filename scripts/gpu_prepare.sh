#!/usr/bin/env bash
# Before a GPU slot, on the development machine: the Python 3.12 wheels of what the GPU image lacks (it has its own
# torch, accelerate, peft, sacrebleu, tokenizers ...; see the README's GPU section) into .whl/ (18 MB), CTranslate2's
# into .whl-ct2/ (43 MB), and the data the report uses into .gpu/data/ (8 MB). All three are git-ignored. A device
# call carries at most 64 MiB: carry .whl and .gpu for every step but the CTranslate2 one, then .whl, .whl-ct2 and
# .gpu's Multi30k for `--only translate` (see the README's GPU section).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .whl .whl-ct2 .gpu
platforms=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64
           --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
download() {  # download FOLDER PACKAGE==VERSION ...
  local into=$1; shift
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    "${platforms[@]}" -d "$into" "$@"
}
# Pinned as in requirements.txt; pure-Python ones and those with cp312 wheels.
download .whl transformers==5.23.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 evaluate==0.4.6 \
  hjson==3.1.0 pydantic==2.14.3 pydantic-core==2.50.4 annotated-types==0.8.0 typing-inspection==0.4.5 \
  sacremoses==0.2.0
# DeepSpeed is published as a source archive only: build its (pure-Python, ops compiled at first use) wheel here,
# in pip's own build environment (its setup.py needs no torch with DS_BUILD_OPS=0).
DS_BUILD_OPS=0 python3 -m pip wheel -q --no-deps deepspeed==0.19.8 -w .whl
download .whl-ct2 ctranslate2==4.8.5
rm -rf .gpu/data && mkdir -p .gpu/data/multi30k
cp ../shared/data/multi30k/*.en.gz ../shared/data/multi30k/*.de.gz .gpu/data/multi30k/
cp -r ../shared/data/mt-geneval .gpu/data/mt-geneval
du -sh .whl .whl-ct2 .gpu
