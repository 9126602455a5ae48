"""``benchmark.sh``: a load test with the quote's workload.

``vllm bench serve`` (vLLM v0.27.1 vllm/benchmarks/serve.py): ``--backend openai-chat --endpoint
/v1/chat/completions --dataset-name random --random-input-len --random-output-len --max-concurrency
--num-prompts --save-result --result-dir --result-filename``; the saved file is vLLM's standard result
JSON (``duration``, ``completed``, ``output_throughput``, ``mean_ttft_ms``, ``mean_tpot_ms``, … and the
``max_concurrency`` it ran at, and the ``--metadata`` server and node count), which the quote's import
reads and compares with its plan.
"""

from __future__ import annotations

from .. import recipes as rc
from .. import site_values as sv
from ..types import BundleContext
from .shell import quote, script


def concurrency_sweep(target: int, max_num_seqs_total: int) -> list[int]:
    """Powers of two up to the quote's concurrency, the quote's own figure, and the engine's seat count."""
    top = max(1, target)
    sweep = [c for c in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512) if c < top]
    sweep.append(top)
    if max_num_seqs_total > top:
        sweep.append(max_num_seqs_total)
    return sorted(set(sweep))


def benchmark_script(ctx: BundleContext, entrypoint: str, total_seats: int) -> str:
    """``benchmark.sh``: ``vllm bench serve`` against the entrypoint with the quote's workload."""
    isl, osl, concurrency = ctx.workload
    sweep = concurrency_sweep(concurrency, total_seats)
    # the tokenizer needs remote code exactly when the engine does
    remote_code = ("--trust-remote-code", None) in rc.for_context(ctx.recipe, ctx.ascend).flags
    url = entrypoint.replace("<gateway host>", "__GATEWAY_VIP__")  # the gateways' virtual IP
    body = [
        "# Load test with the quote's workload; every run writes vLLM's standard result JSON, which the",
        "# quote imports (Quote > Import measured results).  Run it from any host that reaches the endpoint",
        "# and has vLLM installed (the serving image has it).",
        f"endpoint=${{ENDPOINT:-{quote('http://' + url)}}}",
        f"model={quote(ctx.served_name)}",
        f"tokenizer=${{TOKENIZER:-{quote(ctx.model_path)}}}",
        f"input_len={int(isl)}",
        f"output_len={int(osl)}",
        "result_dir=${RESULT_DIR:-results}",
        'mkdir -p "$result_dir"',
        f"for concurrency in {' '.join(str(c) for c in sweep)}; do",
        "  # at least 10 requests per seat, so the steady state dominates the ramp",
        "  prompts=$(( concurrency * 10 ))",
        "  vllm bench serve \\",
        "    --backend openai-chat \\",
        '    --base-url "$endpoint" \\',
        "    --endpoint /v1/chat/completions \\",
        '    --model "$model" \\',
        '    --tokenizer "$tokenizer" \\',
        *(["    --trust-remote-code \\"] if remote_code else []),
        "    --dataset-name random \\",
        '    --random-input-len "$input_len" \\',
        '    --random-output-len "$output_len" \\',
        "    --ignore-eos \\",
        '    --max-concurrency "$concurrency" \\',
        '    --num-prompts "$prompts" \\',
        "    --percentile-metrics ttft,tpot,itl,e2el \\",
        "    --metric-percentiles 50,90,99 \\",
        # what the quote's import compares with its plan (quotes/benchmarks/importer.py
        # benchmark_mismatches): vllm/benchmarks/serve.py writes each KEY=VALUE into the result
        f"    --metadata {quote('server=' + sv.one_line(ctx.server_name, 120))} {quote(f'nodes={int(ctx.node_count)}')} \\",
        "    --save-result \\",
        '    --result-dir "$result_dir" \\',
        '    --result-filename "bench-c${concurrency}-in${input_len}-out${output_len}.json"',
        "done",
        'echo "results in $result_dir/ (vLLM bench serve JSON, one file per concurrency)"',
    ]
    return script(
        f"Load test for {ctx.model_name}: vllm bench serve, input {isl} / output {osl} tokens, "
        f"concurrency {', '.join(str(c) for c in sweep)}",
        {},
        "\n".join(body) + "\n",
    )
