"""WinoMT (Stanovsky et al., ACL 2019) scored offline: translations of the benchmark's English sentences read
(:mod:`~bias_eval.winomt.data`), aligned with fast_align's model (:mod:`~bias_eval.winomt.align`), the translated
profession's gender read by rules per language (:mod:`~bias_eval.winomt.gender`, :mod:`~bias_eval.winomt.score`),
its figures (:mod:`~bias_eval.winomt.figures`) and report (:mod:`~bias_eval.winomt.report`:
:func:`~bias_eval.winomt.report.make_winomt_report`)."""
