#!/usr/bin/env bash
# The GPU report on a borrowed GPU machine whose image has its own torch and no package index: install the wheels
# scripts/gpu_prepare.sh put in .whl/ (without touching its torch), then run scripts/gpu_report.py.
#   bash scripts/gpu_report.sh --only GROUP [gpu_report.py flags]    (one group per device command; --dry_run lists them)
# The report, logs and profiles go to $OUT/gpu_report where $OUT is set (what a device command brings back).
set -euo pipefail
cd "$(dirname "$0")/.."
wheels=()
for wheel in .whl/*.whl .whl-ct2/*.whl; do [[ -f $wheel ]] && wheels+=("$wheel"); done
if (( ${#wheels[@]} )); then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/mtkit-site "${wheels[@]}"
  export PYTHONPATH="/tmp/mtkit-site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
else
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no GPU')"
python3 scripts/gpu_report.py "$@"
