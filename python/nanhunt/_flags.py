"""The flags of every nanhunt command, as ``nanhunt flags --json`` lists them (schema
nanhunt/flags/v1): what the package builds its command lines from.

Written from the binary by ``go test ./cmd/nanhunt -update``: do not edit. The Go test
holds it to the binary built from the same source, tests/test_flags.py to the
binary the package runs.
"""

import json
from typing import Any, Dict

LISTING: Dict[str, Any] = json.loads(
    r"""
{
  "schema": "nanhunt/flags/v1",
  "commands": [
    {
      "name": "demo",
      "usage": "demo",
      "summary": "Generate the built-in example run and trace it",
      "flags": [
        {
          "name": "format",
          "shorthand": "",
          "type": "string",
          "default": "text",
          "repeatable": false,
          "help": "output format: text, json (the stable verdict), markdown (a summary for an issue tracker) or skill (the nan-overflow-detection skill's shapes)"
        },
        {
          "name": "html",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "also write the report of the demo's verdict as one offline HTML page to this file"
        },
        {
          "name": "jobs",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "files read at once (default: one per CPU)"
        },
        {
          "name": "keep",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "write the run to this folder and keep it (must not exist); without it the run is deleted when the demo ends"
        },
        {
          "name": "log",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": true,
          "help": "training log file, or a glob such as 'logs/rank*.log' (repeatable)"
        },
        {
          "name": "log-format",
          "shorthand": "",
          "type": "string",
          "default": "auto",
          "repeatable": false,
          "help": "log format: auto, megatron, deepspeed, json or generic"
        },
        {
          "name": "log-pattern",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": true,
          "help": "generic format: step=REGEX, loss=REGEX or grad_norm=REGEX (key names in JSON logs); repeatable"
        },
        {
          "name": "log-step-offset",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "dump step = log iteration + this (default -1 for Megatron-LM and DeepSpeed, which count from 1; 0 for JSON and generic logs)"
        },
        {
          "name": "monitor",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "msprobe monitor output folder (MONITOR_OUTPUT_DIR, or one rank's folder)"
        },
        {
          "name": "output",
          "shorthand": "o",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "write the verdict to this file instead of stdout"
        },
        {
          "name": "ranks",
          "shorthand": "",
          "type": "ranges",
          "default": "",
          "repeatable": false,
          "help": "only these ranks, e.g. 0,3-7"
        },
        {
          "name": "rules",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "JSON file of extra exclusion rules (op, side, slot, values, reason)"
        },
        {
          "name": "steps",
          "shorthand": "",
          "type": "ranges",
          "default": "",
          "repeatable": false,
          "help": "only these steps, e.g. 4-8 or 0,3-7"
        },
        {
          "name": "strict",
          "shorthand": "",
          "type": "bool",
          "default": "",
          "repeatable": false,
          "help": "report the first NaN/Inf even when the next step no longer shows it"
        },
        {
          "name": "timeline",
          "shorthand": "",
          "type": "bool",
          "default": "",
          "repeatable": false,
          "help": "read the origin rank's dump.json once more for the calls around the root op (origin.timeline) and a call that hid the value (a hidden explanation); --html, text and markdown output imply it, json and skill skip it unless asked"
        },
        {
          "name": "tp-size",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "tensor-parallel size: the monitor compares a module across the ranks of its group (consecutive ranks)"
        },
        {
          "name": "world-size",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "the job's number of ranks: every rank 0 to N-1 is expected at every step, a rank with no folder is unread (default: the ranks the dump shows)"
        }
      ]
    },
    {
      "name": "export",
      "usage": "export DUMP [--format parquet|csv] -o DIR",
      "summary": "Write every tensor statistic of a dump to Parquet or CSV files",
      "flags": [
        {
          "name": "force",
          "shorthand": "",
          "type": "bool",
          "default": "",
          "repeatable": false,
          "help": "write into a non-empty output folder, replacing an earlier export there"
        },
        {
          "name": "format",
          "shorthand": "",
          "type": "string",
          "default": "parquet",
          "repeatable": false,
          "help": "output format: parquet or csv"
        },
        {
          "name": "jobs",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "files converted at once (default: one per CPU, at most 4; about 10 MB each)"
        },
        {
          "name": "output",
          "shorthand": "o",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "output folder (required; absent or empty)"
        },
        {
          "name": "ranks",
          "shorthand": "",
          "type": "ranges",
          "default": "",
          "repeatable": false,
          "help": "only these ranks, e.g. 0,3-7"
        },
        {
          "name": "steps",
          "shorthand": "",
          "type": "ranges",
          "default": "",
          "repeatable": false,
          "help": "only these steps, e.g. 4-8 or 0,3-7"
        }
      ]
    },
    {
      "name": "flags",
      "usage": "flags [--json]",
      "summary": "List every command's flags: the reference page, or JSON for programs",
      "flags": [
        {
          "name": "json",
          "shorthand": "",
          "type": "bool",
          "default": "",
          "repeatable": false,
          "help": "write the listing as JSON (nanhunt/flags/v1) instead of the Markdown page"
        }
      ]
    },
    {
      "name": "plan",
      "usage": "plan [DUMP]",
      "summary": "Say what to collect next, and write the msprobe config.json for it",
      "flags": [
        {
          "name": "budget",
          "shorthand": "",
          "type": "string",
          "default": "50GB",
          "repeatable": false,
          "help": "the size an any-step tensor dump of the run may take (e.g. 500GB, 2TB)"
        },
        {
          "name": "config-dump-path",
          "shorthand": "",
          "type": "string",
          "default": "./nanhunt_followup",
          "repeatable": false,
          "help": "the dump_path written into the config: where msprobe writes the next dump"
        },
        {
          "name": "config-path",
          "shorthand": "",
          "type": "string",
          "default": "./config.json",
          "repeatable": false,
          "help": "where the config will be saved, for the Python lines that load it"
        },
        {
          "name": "format",
          "shorthand": "",
          "type": "string",
          "default": "text",
          "repeatable": false,
          "help": "output format: text or json (the plan as JSON)"
        },
        {
          "name": "jobs",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "files read at once (default: one per CPU)"
        },
        {
          "name": "log",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": true,
          "help": "training log file, or a glob such as 'logs/rank*.log' (repeatable)"
        },
        {
          "name": "log-format",
          "shorthand": "",
          "type": "string",
          "default": "auto",
          "repeatable": false,
          "help": "log format: auto, megatron, deepspeed, json or generic"
        },
        {
          "name": "log-pattern",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": true,
          "help": "generic format: step=REGEX, loss=REGEX or grad_norm=REGEX (key names in JSON logs); repeatable"
        },
        {
          "name": "log-step-offset",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "dump step = log iteration + this (default -1 for Megatron-LM and DeepSpeed, which count from 1; 0 for JSON and generic logs)"
        },
        {
          "name": "mode",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "any-step (every step and rank: a NaN that moves) or same-step (this anomaly's steps and ranks); default: any-step when it fits --budget"
        },
        {
          "name": "monitor",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "msprobe monitor output folder (MONITOR_OUTPUT_DIR, or one rank's folder)"
        },
        {
          "name": "output",
          "shorthand": "o",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "write the config.json to this file"
        },
        {
          "name": "ranks",
          "shorthand": "",
          "type": "ranges",
          "default": "",
          "repeatable": false,
          "help": "only these ranks, e.g. 0,3-7"
        },
        {
          "name": "rules",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "JSON file of extra exclusion rules (op, side, slot, values, reason)"
        },
        {
          "name": "steps",
          "shorthand": "",
          "type": "ranges",
          "default": "",
          "repeatable": false,
          "help": "only these steps, e.g. 4-8 or 0,3-7"
        },
        {
          "name": "strict",
          "shorthand": "",
          "type": "bool",
          "default": "",
          "repeatable": false,
          "help": "report the first NaN/Inf even when the next step no longer shows it"
        },
        {
          "name": "tp-size",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "tensor-parallel size: the monitor compares a module across the ranks of its group (consecutive ranks)"
        },
        {
          "name": "verdict",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "read this saved JSON verdict instead of analysing a dump"
        },
        {
          "name": "world-size",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "the job's number of ranks: every rank 0 to N-1 is expected at every step, a rank with no folder is unread (default: the ranks the dump shows)"
        }
      ]
    },
    {
      "name": "report",
      "usage": "report VERDICT.json",
      "summary": "Write a saved verdict as an HTML page or a Markdown summary",
      "flags": [
        {
          "name": "format",
          "shorthand": "",
          "type": "string",
          "default": "markdown",
          "repeatable": false,
          "help": "output format: markdown, html, text or skill"
        },
        {
          "name": "html",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "write the HTML page to this file"
        },
        {
          "name": "markdown",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "write the Markdown summary to this file"
        },
        {
          "name": "output",
          "shorthand": "o",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "write to this file instead of stdout"
        }
      ]
    },
    {
      "name": "repro",
      "usage": "repro DUMP -o DIR [--op NAME] [--step S] [--rank R] [--device cpu|cuda|npu]",
      "summary": "Write a single-op reproduction case from a tensor dump",
      "flags": [
        {
          "name": "device",
          "shorthand": "",
          "type": "string",
          "default": "cpu",
          "repeatable": false,
          "help": "default device of repro.py: cpu, cuda, cuda:N, npu or npu:N"
        },
        {
          "name": "force",
          "shorthand": "",
          "type": "bool",
          "default": "",
          "repeatable": false,
          "help": "write into a non-empty case folder"
        },
        {
          "name": "op",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "entry to reproduce, e.g. Torch.sqrt.0.backward (default: the root cause found by trace)"
        },
        {
          "name": "output",
          "shorthand": "o",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "case folder to write (required; absent or empty)"
        },
        {
          "name": "rank",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "rank of the call (default: the root cause's first rank)"
        },
        {
          "name": "step",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "step of the call (default: the root cause's)"
        }
      ]
    },
    {
      "name": "summarize",
      "usage": "summarize DUMP -o OUT",
      "summary": "Summarise the rank folders on this node, for one nanhunt trace over all nodes",
      "flags": [
        {
          "name": "job-id",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "this launch's id, the same on every node (default: the launcher's job id)"
        },
        {
          "name": "jobs",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "files read at once (default: one per CPU)"
        },
        {
          "name": "node-index",
          "shorthand": "",
          "type": "int",
          "default": "-1",
          "repeatable": false,
          "help": "this node's index (default: from the launcher)"
        },
        {
          "name": "nodes",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "how many nodes summarise (default: from the launcher)"
        },
        {
          "name": "output",
          "shorthand": "o",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "the summary file, or a folder for summary-node<N>.jsonl (- for stdout)"
        },
        {
          "name": "ranks",
          "shorthand": "",
          "type": "ranges",
          "default": "",
          "repeatable": false,
          "help": "only these ranks, e.g. 0,3-7"
        },
        {
          "name": "rules",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "JSON file of extra exclusion rules (the same on every node)"
        },
        {
          "name": "run",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "the run's name, the same on every node (default: DUMP as given, made absolute)"
        },
        {
          "name": "steps",
          "shorthand": "",
          "type": "ranges",
          "default": "",
          "repeatable": false,
          "help": "only these steps, e.g. 4-8 or 0,3-7"
        },
        {
          "name": "until-first",
          "shorthand": "",
          "type": "bool",
          "default": "",
          "repeatable": false,
          "help": "phase 1: no details, the smallest summary (see --detail-steps of trace)"
        }
      ]
    },
    {
      "name": "synth",
      "usage": "synth",
      "summary": "Write a generated msprobe-format run with a known fault",
      "flags": [
        {
          "name": "data-mode",
          "shorthand": "",
          "type": "string",
          "default": "all",
          "repeatable": false,
          "help": "msprobe data_mode: all, or forward (no backward and no parameters_grad entries)"
        },
        {
          "name": "ep-size",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "expert-parallel group size (--model moe; 0: the largest of 8, 4, 2, 1 that divides --world-size)"
        },
        {
          "name": "fault",
          "shorthand": "",
          "type": "string",
          "default": "exp-overflow",
          "repeatable": false,
          "help": "fault kind (see --list), or none for a clean run"
        },
        {
          "name": "fault-layer",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "layer of the fault, for kinds that live in a layer"
        },
        {
          "name": "fault-micro-batch",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "micro-batch of the fault (-1: the last)"
        },
        {
          "name": "fault-ranks",
          "shorthand": "",
          "type": "ranges",
          "default": "",
          "repeatable": false,
          "help": "ranks of the fault, e.g. 2,5 (default: one rank of the first pipeline stage)"
        },
        {
          "name": "fault-step",
          "shorthand": "",
          "type": "int",
          "default": "-1",
          "repeatable": false,
          "help": "step of the fault (-1: the second-to-last dumped step)"
        },
        {
          "name": "file-mb",
          "shorthand": "",
          "type": "float",
          "default": "16",
          "repeatable": false,
          "help": "target size of each dump.json in MB (0: no target, use --layers and --micro-batches)"
        },
        {
          "name": "layers",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "transformer layers (0: as many as fit --file-mb, at most 32 per pipeline stage)"
        },
        {
          "name": "level",
          "shorthand": "",
          "type": "string",
          "default": "L1",
          "repeatable": false,
          "help": "dump level: L1 or mix"
        },
        {
          "name": "list",
          "shorthand": "",
          "type": "bool",
          "default": "",
          "repeatable": false,
          "help": "list the scenarios and fault kinds"
        },
        {
          "name": "log-dir",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "also write the Megatron-LM training log of the run to DIR/train.log"
        },
        {
          "name": "log-nan-loss",
          "shorthand": "",
          "type": "bool",
          "default": "",
          "repeatable": false,
          "help": "print a NaN loss as \"lm loss: NAN\" and count non-finite iterations as nan iterations (training_log leaves a NaN loss out)"
        },
        {
          "name": "micro-batches",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "forward and backward passes per step (0: as many as fit --file-mb)"
        },
        {
          "name": "model",
          "shorthand": "",
          "type": "string",
          "default": "dense",
          "repeatable": false,
          "help": "model layout: dense, tp (tensor parallel), pp (pipeline) or moe"
        },
        {
          "name": "monitor-dir",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "also write the msprobe monitor (TrainerMon) output of every rank under DIR"
        },
        {
          "name": "monitor-ops",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": true,
          "help": "monitor statistics in config order, among min, max, mean, norm, nans (default norm,nans)"
        },
        {
          "name": "output",
          "shorthand": "o",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "folder to write the run to"
        },
        {
          "name": "pp-size",
          "shorthand": "",
          "type": "int",
          "default": "2",
          "repeatable": false,
          "help": "pipeline stages (--model pp)"
        },
        {
          "name": "scenario",
          "shorthand": "",
          "type": "string",
          "default": "demo",
          "repeatable": false,
          "help": "scenario name (see --list)"
        },
        {
          "name": "seed",
          "shorthand": "",
          "type": "int",
          "default": "1",
          "repeatable": false,
          "help": "random seed"
        },
        {
          "name": "steps",
          "shorthand": "",
          "type": "ranges",
          "default": "0-5",
          "repeatable": false,
          "help": "dumped steps, e.g. 0-5 or 0,2,4-7 (the simulation runs from step 0)"
        },
        {
          "name": "tp-size",
          "shorthand": "",
          "type": "int",
          "default": "2",
          "repeatable": false,
          "help": "tensor-parallel group size (--model tp)"
        },
        {
          "name": "world-size",
          "shorthand": "",
          "type": "int",
          "default": "8",
          "repeatable": false,
          "help": "world size: the number of ranks of the run"
        }
      ]
    },
    {
      "name": "trace",
      "usage": "trace [DUMP | SUMMARY... | DIR_OF_SUMMARIES] [--log FILE...] [--monitor DIR]",
      "summary": "Find the origin of the first NaN/Inf in a dump, a training log or monitor output",
      "flags": [
        {
          "name": "detail-steps",
          "shorthand": "",
          "type": "bool",
          "default": "",
          "repeatable": false,
          "help": "with summaries made by summarize --until-first: print the steps to summarise again with details (for --steps), and stop"
        },
        {
          "name": "format",
          "shorthand": "",
          "type": "string",
          "default": "text",
          "repeatable": false,
          "help": "output format: text, json (the stable verdict), markdown (a summary for an issue tracker) or skill (the nan-overflow-detection skill's shapes)"
        },
        {
          "name": "html",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "also write the report as one offline HTML page to this file"
        },
        {
          "name": "jobs",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "files read at once (default: one per CPU)"
        },
        {
          "name": "log",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": true,
          "help": "training log file, or a glob such as 'logs/rank*.log' (repeatable)"
        },
        {
          "name": "log-format",
          "shorthand": "",
          "type": "string",
          "default": "auto",
          "repeatable": false,
          "help": "log format: auto, megatron, deepspeed, json or generic"
        },
        {
          "name": "log-pattern",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": true,
          "help": "generic format: step=REGEX, loss=REGEX or grad_norm=REGEX (key names in JSON logs); repeatable"
        },
        {
          "name": "log-step-offset",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "dump step = log iteration + this (default -1 for Megatron-LM and DeepSpeed, which count from 1; 0 for JSON and generic logs)"
        },
        {
          "name": "monitor",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "msprobe monitor output folder (MONITOR_OUTPUT_DIR, or one rank's folder)"
        },
        {
          "name": "output",
          "shorthand": "o",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "write the verdict to this file instead of stdout"
        },
        {
          "name": "ranks",
          "shorthand": "",
          "type": "ranges",
          "default": "",
          "repeatable": false,
          "help": "only these ranks, e.g. 0,3-7"
        },
        {
          "name": "rules",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "JSON file of extra exclusion rules (op, side, slot, values, reason)"
        },
        {
          "name": "steps",
          "shorthand": "",
          "type": "ranges",
          "default": "",
          "repeatable": false,
          "help": "only these steps, e.g. 4-8 or 0,3-7"
        },
        {
          "name": "strict",
          "shorthand": "",
          "type": "bool",
          "default": "",
          "repeatable": false,
          "help": "report the first NaN/Inf even when the next step no longer shows it"
        },
        {
          "name": "timeline",
          "shorthand": "",
          "type": "bool",
          "default": "",
          "repeatable": false,
          "help": "read the origin rank's dump.json once more for the calls around the root op (origin.timeline) and a call that hid the value (a hidden explanation); --html, text and markdown output imply it, json and skill skip it unless asked"
        },
        {
          "name": "tp-size",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "tensor-parallel size: the monitor compares a module across the ranks of its group (consecutive ranks)"
        },
        {
          "name": "world-size",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "the job's number of ranks: every rank 0 to N-1 is expected at every step, a rank with no folder is unread (default: the ranks the dump shows)"
        }
      ]
    },
    {
      "name": "version",
      "usage": "version",
      "summary": "Print the version, the VCS revision it was built from and the verdict schema",
      "flags": []
    },
    {
      "name": "watch",
      "usage": "watch DUMP_PATH [-o DIR] [--on-anomaly CMD] [--exit-on-anomaly]",
      "summary": "Follow a running msprobe job and raise the alarm at the first anomaly that lasts",
      "flags": [
        {
          "name": "exit-on-anomaly",
          "shorthand": "",
          "type": "bool",
          "default": "",
          "repeatable": false,
          "help": "exit 1 right after the alarm"
        },
        {
          "name": "format",
          "shorthand": "",
          "type": "string",
          "default": "text",
          "repeatable": false,
          "help": "output: text (a line per step, then the verdict) or jsonl (one JSON object per event)"
        },
        {
          "name": "idle-exit",
          "shorthand": "",
          "type": "duration",
          "default": "",
          "repeatable": false,
          "help": "stop when the folder has not changed for this long (0: never)"
        },
        {
          "name": "jobs",
          "shorthand": "",
          "type": "int",
          "default": "1",
          "repeatable": false,
          "help": "files read at once"
        },
        {
          "name": "log",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": true,
          "help": "training log file, or a glob such as 'logs/rank*.log' (repeatable)"
        },
        {
          "name": "log-format",
          "shorthand": "",
          "type": "string",
          "default": "auto",
          "repeatable": false,
          "help": "log format: auto, megatron, deepspeed, json or generic"
        },
        {
          "name": "log-pattern",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": true,
          "help": "generic format: step=REGEX, loss=REGEX or grad_norm=REGEX (key names in JSON logs); repeatable"
        },
        {
          "name": "log-step-offset",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "dump step = log iteration + this (default -1 for Megatron-LM and DeepSpeed, which count from 1; 0 for JSON and generic logs)"
        },
        {
          "name": "monitor",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "msprobe monitor output folder (MONITOR_OUTPUT_DIR, or one rank's folder)"
        },
        {
          "name": "nice",
          "shorthand": "",
          "type": "int",
          "default": "10",
          "repeatable": false,
          "help": "scheduling priority to lower the watch to (0 keeps it)"
        },
        {
          "name": "on-anomaly",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "shell command to run at the alarm (see the environment above)"
        },
        {
          "name": "on-warning",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "shell command to run once per statistic heading for overflow (see the environment above)"
        },
        {
          "name": "output",
          "shorthand": "o",
          "type": "string",
          "default": "nanhunt-watch",
          "repeatable": false,
          "help": "folder for the verdict and the HTML report of the alarm (run from inside the dump, the default is nanhunt-watch-NAME beside it)"
        },
        {
          "name": "poll",
          "shorthand": "",
          "type": "duration",
          "default": "500ms",
          "repeatable": false,
          "help": "how often to look at the folder"
        },
        {
          "name": "prune-clean-tensors",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "delete the tensor files (dump_tensor_data) of the steps checked clean, keeping those of the last N (at least 1); logged to DIR/pruned.log"
        },
        {
          "name": "rank-timeout",
          "shorthand": "",
          "type": "duration",
          "default": "4 × --settle",
          "repeatable": false,
          "help": "how long a step that some ranks have finished waits for the others after it last moved on; then it is judged without them"
        },
        {
          "name": "ranks",
          "shorthand": "",
          "type": "ranges",
          "default": "",
          "repeatable": false,
          "help": "only these ranks, e.g. 0,3-7"
        },
        {
          "name": "rules",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "JSON file of extra exclusion rules (op, side, slot, values, reason)"
        },
        {
          "name": "settle",
          "shorthand": "",
          "type": "duration",
          "default": "2s",
          "repeatable": false,
          "help": "how long a dump.json must stay unchanged to count as written"
        },
        {
          "name": "state",
          "shorthand": "",
          "type": "string",
          "default": "",
          "repeatable": false,
          "help": "file that keeps what was checked, to resume a watch"
        },
        {
          "name": "strict",
          "shorthand": "",
          "type": "bool",
          "default": "",
          "repeatable": false,
          "help": "report the first NaN/Inf even when the next step no longer shows it"
        },
        {
          "name": "tp-size",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "tensor-parallel size: the monitor compares a module across the ranks of its group (consecutive ranks)"
        },
        {
          "name": "until-step",
          "shorthand": "",
          "type": "int",
          "default": "-1",
          "repeatable": false,
          "help": "stop once this step is checked"
        },
        {
          "name": "world-size",
          "shorthand": "",
          "type": "int",
          "default": "",
          "repeatable": false,
          "help": "the job's number of ranks: every rank 0 to N-1 is expected at every step, a rank with no folder is unread (default: the ranks the dump shows)"
        }
      ]
    }
  ]
}
"""
)
