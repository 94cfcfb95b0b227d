"""Names used where vulture (the dead-code check of ./dev test, [tool.vulture] in pyproject.toml)
cannot see them. Each group says how it is used; a name belongs here only for such a reason."""
# ruff: noqa

# Named by strings: a Benchmark value's extras.lazy(module, name), models/registry.BACKENDS,
# `--model python:MODULE:CLASS` specs and a checkpoint's config.json "architectures".
resolve_declared  # benchmarks/custom/__init__.py
export_source  # benchmarks/custom/__init__.py
knob_figures  # benchmarks/fourd/__init__.py
build_anthropic  # models/registry.py
build_blind  # models/registry.py
build_gemini  # models/registry.py
build_openai  # models/registry.py
build_openai_compat  # models/registry.py
OwnChatModel  # docs/reproducing-papers.md
CostlyStart  # tests/runner/test_run.py
SeesPixels  # tests/runner/test_video_edited.py
Timed  # tests/runner/test_stages_out_of_order.py
FailsOnMark  # tests/runner/test_stages_out_of_order.py
Blank  # tests/fourd/qa/test_qa_layouts.py
TinyOwnVL  # tests/tiny_own_code.py
Fewer  # tests/plugins/test_plugin_mistakes.py
NotText  # tests/plugins/test_plugin_mistakes.py
SlowHF  # tests/models/test_hf_faults.py

# Called by a library through an interface it defines: argparse.Action.__call__'s and a signal
# handler's parameters, nltk's WordNet reader, pydantic fields read through the model.
option_string  # argparse.Action.__call__
signum  # signal handler
map_wn  # nltk WordNetCorpusReader
_.do_GET  # http.server's request handler (tests/api_support.RawServer)
_.do_POST
_.log_message
_.protocol_version
_.skip_frame  # media/decode.py: PyAV's codec context, read by FFmpeg's decoder
_.soft_wrap  # console.py: rich's Console, read by its print
_.schema_version  # report/schema.py: every results file's field
_.raw_output_cut  # report/schema.py
_.created  # report/schema.py
_.seeds  # report/schema.py
_.n_items  # annotate/progress.TaskProgress, shown as JSON
_.withdrawn  # annotate/progress.TaskProgress
_.assigned  # annotate/progress.TaskProgress
_.model_input_names  # tests/video_stand_in.py: what transformers reads of a processor
fake_vllm  # tests: a pytest fixture requested by its name

# Set on another library's objects, which read them: sqlite3, numpy, PyAV, onnxruntime,
# uvicorn, Blender, tokenizers, functions' names.
_.row_factory
_.writeable
_.thread_type
_.thread_count
_.pict_type
_.intra_op_num_threads
_.log_severity_level
_.should_exit
_.daemon_threads  # http.server (tests/api_support.RawServer)
_.close_connection
_.pre_tokenizer
_.__qualname__
_.lens
_.sensor_fit
_.sensor_width
_.resolution_x
_.resolution_y
_.resolution_percentage  # Blender's render settings (benchmarks/fourd/curate/blender_scene.py)
_.film_transparent
_.file_format
_.color_mode
_.view_transform
_.threads_mode
_.use_denoising
_.use_adaptive_sampling
_.taa_render_samples
_.color
_.energy
_.rotation_euler
_.compute_device_type
_.filepath
_.max_new_tokens  # transformers' GenerationConfig (models/hf_runtime.py)
_.do_sample
_.top_k

# Keys of TypedDicts, read by name by what reads the dict: a JSON file's reader, the HTML
# report's and the review app's pages, vLLM (its prompt inputs), the pricing table's TOML.
_.error_type  # analyze/errors.py
_.error_name  # analyze/errors.py
_.missing_samples  # analyze/errors.py
_.changed_samples  # analyze/errors.py
_.updated_by  # annotate/db.py
_.updated_at  # annotate/db.py, annotate/work.py
_.deleted  # annotate/work.py
_.updated_by_name  # annotate/work.py
_.given_again  # annotate/work.py
_.judge_status  # benchmarks/autoeval_video/agreement.py
_.labels_file  # benchmarks/autoeval_video/agreement.py
_.n_labels  # benchmarks/autoeval_video/agreement.py
_.n_counted  # benchmarks/autoeval_video/agreement.py
_.n_dropped  # benchmarks/autoeval_video/agreement.py
_.n_unparsed  # benchmarks/autoeval_video/agreement.py
_.broke  # benchmarks/autoeval_video/redteam.py
_.successful_attacks  # benchmarks/autoeval_video/redteam.py
_.rules_sha256  # benchmarks/autoeval_video/redteam.py
_.accept  # benchmarks/fourd/curate/qa/candidates.py
_.cost_usd  # benchmarks/fourd/curate/qa/funnel.py
_.machine_generated  # benchmarks/fourd/curate/qa/layout.py
_.metric_info  # benchmarks/fourd/score_captions.py
_.judged_objects  # benchmarks/fourd/score_captions.py
_.column_order  # benchmarks/fourd/score_captions.py
_.options_in_file  # benchmarks/mmworld/loader.py
_.answer_text  # benchmarks/mmworld/loader.py
_.process_group  # models/owned_process.py
_.currency  # models/pricing.py
_.input  # models/pricing.py
_.per_mtok  # models/pricing.py
_.multi_modal_data  # models/vllm_inputs.py
_.verdict_reply  # view/samples.py
_.media_error  # view/samples.py
_.model_post_init  # report/schema.py: pydantic calls it after validation
_.n_unjudged  # benchmarks/autoeval_video/agreement.py: a key of agreement.json (TypedDict)
_.n_refused  # benchmarks/autoeval_video/agreement.py: a key of agreement.json (TypedDict)
_.lower_bound  # models/pricing.py: a key of results.json's cost (TypedDict)
