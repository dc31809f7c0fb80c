# tests/lib/tt_llm_rows.sh: the preamble of the tests that write tables
# for validate-tt-llm (tests/tt_llm.sh, tests/llm_step_tt.sh). Sourced
# after tests/lib/script.sh: the working directory becomes the source
# tree; py is a python3 with NumPy; head is the table's CSV header.
cd "$src"
. "$src/tests/lib/numpy.sh"
py=$(numpy_python)
head=model,machine,precision,batch,prompt_len,gen_tokens,measured_tps_u,measured_ttft_ms
