package msprobe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Tasks, levels and the keys msprobe's PyTorch config accepts
// (docs/zh/user_guide/dump/config_json_introduct.md,
// python/msprobe/core/dump/common_config.py).
var (
	tasks  = set("statistics", "tensor", "structure", "overflow_check", "free_benchmark", "run_ut", "acc_check", "grad_probe", "nan_check", "exception_dump")
	levels = set("L0", "L1", "L2", "mix", "debug")
	common = set("task", "dump_path", "rank", "step", "level", "async_dump", "dump_enable", "extra_info",
		"precision", "risk_level", "custom_op_namespaces", "enable_dataloader", "is_deterministic", "enable_module_dump")
	sectionKeys = set("scope", "list", "tensor_list", "data_mode", "summary_mode", "slice", "request_id",
		"bench_path", "diff_nums", "overflow_nums", "check_mode", "file_format", "online_run_ut", "nfs_path", "host", "port")
	dataModes    = set("all", "forward", "backward", "input", "output")
	summaryModes = set("statistics", "md5", "xor")
	riskLevels   = set("ALL", "CORE", "FOCUS")
)

func set(words ...string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words {
		m[w] = true
	}
	return m
}

// Validate checks a config.json the way msprobe reads it: known keys only,
// dump_path set, task and level from msprobe's lists, rank and step as
// lists of non-negative numbers or "a-b" ranges, and the task's section
// with valid data_mode and summary_mode. Every problem is listed.
func Validate(data []byte) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var top map[string]any
	if err := d.Decode(&top); err != nil {
		return fmt.Errorf("config is not a JSON object: %w", err)
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	task, _ := top["task"].(string)
	if task == "" {
		task = "statistics"
	}
	if !tasks[task] {
		bad("task %q is not one of msprobe's tasks", task)
	}
	if p, ok := top["dump_path"].(string); !ok || p == "" {
		bad("dump_path must be a non-empty string")
	}
	if l, ok := top["level"]; ok {
		if s, _ := l.(string); !levels[s] {
			bad("level %v is not one of L0, L1, L2, mix, debug", l)
		}
	}
	if r, ok := top["risk_level"]; ok {
		if s, _ := r.(string); !riskLevels[s] {
			bad("risk_level %v is not one of ALL, CORE, FOCUS", r)
		}
	}
	for _, k := range []string{"async_dump", "dump_enable", "extra_info", "enable_dataloader"} {
		if v, ok := top[k]; ok {
			if _, isBool := v.(bool); !isBool {
				bad("%s must be true or false", k)
			}
		}
	}
	for _, k := range []string{"rank", "step"} {
		if v, ok := top[k]; ok {
			if err := checkRanks(v); err != nil {
				bad("%s: %v", k, err)
			}
		}
	}
	for _, k := range sortedKeys(top) {
		switch {
		case common[k]:
		case tasks[k]:
			if k != task {
				bad("section %q does not match task %q", k, task)
				continue
			}
			sec, ok := top[k].(map[string]any)
			if !ok {
				bad("%s must be an object", k)
				continue
			}
			problems = append(problems, checkSection(k, sec)...)
		default:
			bad("unknown key %q", k)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("invalid msprobe config: %s", strings.Join(problems, "; "))
	}
	return nil
}

func checkSection(task string, sec map[string]any) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(task+"."+format, args...)) }
	for _, k := range sortedKeys(sec) {
		if !sectionKeys[k] {
			bad("%s is not a key of a task section", k)
		}
	}
	for _, k := range []string{"scope", "list", "tensor_list"} {
		if v, ok := sec[k]; ok {
			if _, err := stringList(v); err != nil {
				bad("%s: %v", k, err)
			}
		}
	}
	if v, ok := sec["scope"]; ok {
		if s, _ := stringList(v); len(s) != 0 && len(s) != 2 {
			bad("scope holds %d names; it takes none or two (a range)", len(s))
		}
	}
	if v, ok := sec["data_mode"]; ok {
		modes, err := stringList(v)
		if err != nil || len(modes) == 0 {
			bad("data_mode must be a non-empty list")
		}
		for _, m := range modes {
			if !dataModes[m] {
				bad("data_mode %q is not one of all, forward, backward, input, output", m)
			}
		}
	}
	if v, ok := sec["summary_mode"]; ok {
		if s, _ := v.(string); !summaryModes[s] {
			bad("summary_mode %v is not one of statistics, md5, xor", v)
		}
	}
	return problems
}

func stringList(v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("must be a list")
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("%v is not a string", x)
		}
		out = append(out, s)
	}
	return out, nil
}

// checkRanks accepts a list of non-negative integers or "a-b" ranges.
func checkRanks(v any) error {
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("must be a list")
	}
	for _, x := range list {
		switch x := x.(type) {
		case json.Number:
			n, err := strconv.Atoi(string(x))
			if err != nil || n < 0 {
				return fmt.Errorf("%v is not a non-negative integer", x)
			}
		case string:
			if _, err := rangeOf(x); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%v is neither a number nor a range", x)
		}
	}
	return nil
}

// rangeOf reads "4-6" (or "3").
func rangeOf(s string) ([2]int, error) {
	lo, hi, found := strings.Cut(strings.TrimSpace(s), "-")
	a, err1 := strconv.Atoi(strings.TrimSpace(lo))
	b := a
	var err2 error
	if found {
		b, err2 = strconv.Atoi(strings.TrimSpace(hi))
	}
	if err1 != nil || err2 != nil || a < 0 || b < a {
		return [2]int{}, fmt.Errorf("%q is not a range like \"4-6\"", s)
	}
	return [2]int{a, b}, nil
}

// readRanks reads rank or step back into numbers.
func readRanks(raw json.RawMessage) ([]int, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var list []any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&list); err != nil {
		return nil, err
	}
	if err := checkRanks(list); err != nil {
		return nil, err
	}
	var out []int
	for _, x := range list {
		switch x := x.(type) {
		case json.Number:
			n, _ := strconv.Atoi(string(x))
			out = append(out, n)
		case string:
			r, _ := rangeOf(x)
			for i := r[0]; i <= r[1] && len(out) < 1<<20; i++ {
				out = append(out, i)
			}
		}
	}
	return out, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
