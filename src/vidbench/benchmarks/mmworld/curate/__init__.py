"""Building MMWorld's synthetic subsets (MMWorld paper, section 3.2 and appendix C).

Synthetic Subset I holds questions answerable from a video's audio alone, Subset II questions
answerable from its frames alone. The paper's pipeline: subdiscipline search queries, videos
found for them, ten keyframes per video, an ASR transcript, then QA generation by a model from
the keyframes or from the transcript. vidbench adds the filtering the paper's design calls for
(each question checked against each modality and against the question alone) and writes the
subset format `vidbench run mmworld-synth-audio` / `mmworld-synth-visual` read.

Modules, in pipeline order: videos (the input listing), queries (search queries per
subdiscipline), asr + whisper (transcripts), keyframes, generation + candidates (questions),
filters, funnel (counts and tokens per stage), writer (the subset files), pipeline (the stages
in order) and commands (`vidbench curate mmworld ...`).
"""
