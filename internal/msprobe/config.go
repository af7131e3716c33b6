package msprobe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"unicode/utf8"
)

// Config is an msprobe config.json for PyTorch dumps.
type Config struct {
	Task      string // statistics or tensor
	DumpPath  string
	Rank      []int // empty: every rank
	Step      []int // empty: every step
	Level     string
	AsyncDump bool
	ExtraInfo bool
	// RiskLevel is "ALL" to record the calls msprobe skips by default
	// (views, casts, clamp); empty leaves msprobe's default.
	RiskLevel string
	Section   Section // written under the key named by Task
}

// Section is the task's own part of the config.
type Section struct {
	Scope       []string // two names: the range of calls to record
	List        []string // names or substrings of the calls to record
	DataMode    []string // "all", or forward/backward/input/output
	SummaryMode string   // statistics, md5 or xor
}

// MarshalJSON writes the keys in the order of msprobe's documentation.
func (c Config) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	field := func(key string, v any, last bool) error {
		val, err := json.Marshal(v)
		if err != nil {
			return err
		}
		k, _ := json.Marshal(key)
		fmt.Fprintf(&b, "%s:%s", k, val)
		if !last {
			b.WriteByte(',')
		}
		return nil
	}
	b.WriteByte('{')
	steps := []struct {
		k string
		v any
	}{
		{"task", c.Task}, {"dump_path", c.DumpPath}, {"rank", ints(c.Rank)}, {"step", ints(c.Step)},
		{"level", c.Level}, {"async_dump", c.AsyncDump}, {"extra_info", c.ExtraInfo},
	}
	if c.RiskLevel != "" {
		steps = append(steps, struct {
			k string
			v any
		}{"risk_level", c.RiskLevel})
	}
	for _, s := range steps {
		if err := field(s.k, s.v, false); err != nil {
			return nil, err
		}
	}
	var sb bytes.Buffer
	sb.WriteByte('{')
	for i, kv := range []struct {
		k string
		v any
	}{
		{"scope", strs(c.Section.Scope)}, {"list", strs(c.Section.List)},
		{"data_mode", strs(c.Section.DataMode)}, {"summary_mode", c.Section.SummaryMode},
	} {
		val, err := json.Marshal(kv.v)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "%q:%s", kv.k, val)
	}
	sb.WriteByte('}')
	task, err := json.Marshal(c.Task)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(&b, "%s:%s}", task, sb.Bytes())
	return b.Bytes(), nil
}

// UnmarshalJSON reads a config.json; keys it does not model are dropped.
func (c *Config) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	var x struct {
		Task      string `json:"task"`
		DumpPath  string `json:"dump_path"`
		Level     string `json:"level"`
		AsyncDump bool   `json:"async_dump"`
		ExtraInfo bool   `json:"extra_info"`
		RiskLevel string `json:"risk_level"`
	}
	if err := json.Unmarshal(data, &x); err != nil {
		return err
	}
	*c = Config{Task: x.Task, DumpPath: x.DumpPath, Level: x.Level, AsyncDump: x.AsyncDump, ExtraInfo: x.ExtraInfo, RiskLevel: x.RiskLevel}
	var err error
	if c.Rank, err = readRanks(raw["rank"]); err != nil {
		return fmt.Errorf("rank: %w", err)
	}
	if c.Step, err = readRanks(raw["step"]); err != nil {
		return fmt.Errorf("step: %w", err)
	}
	if sec, ok := raw[x.Task]; ok {
		var s struct {
			Scope       []string `json:"scope"`
			List        []string `json:"list"`
			DataMode    []string `json:"data_mode"`
			SummaryMode string   `json:"summary_mode"`
		}
		if err := json.Unmarshal(sec, &s); err != nil {
			return fmt.Errorf("%s: %w", x.Task, err)
		}
		c.Section = Section{Scope: s.Scope, List: s.List, DataMode: s.DataMode, SummaryMode: s.SummaryMode}
	}
	return nil
}

// Indented is the config as msprobe's documentation lays it out.
func (c Config) Indented() ([]byte, error) {
	// JSON holds text: a path or name that is not UTF-8 would be written
	// as another one (U+FFFD in place of its bytes), and msprobe would
	// dump somewhere else
	for _, s := range append(append([]string{c.Task, c.DumpPath, c.Level, c.Section.SummaryMode}, c.Section.List...), append(c.Section.Scope, c.Section.DataMode...)...) {
		if !utf8.ValidString(s) {
			return nil, fmt.Errorf("msprobe config: %q is not UTF-8, which config.json cannot hold", s)
		}
	}
	data, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, data, "", "    "); err != nil {
		return nil, err
	}
	// lists of numbers and names on one line, as in msprobe's examples
	out := flatLists.ReplaceAllFunc(b.Bytes(), func(m []byte) []byte {
		inner := bytes.TrimSpace(m[1 : len(m)-1])
		return append(append([]byte{'['}, itemBreak.ReplaceAll(inner, []byte(", "))...), ']')
	})
	return append(out, '\n'), nil
}

var (
	flatLists = regexp.MustCompile(`\[\s*\n[^\[\]{}]*?\n\s*\]`)
	itemBreak = regexp.MustCompile(`,\s*\n\s*`)
)

func ints(v []int) []int {
	if v == nil {
		return []int{}
	}
	return v
}

func strs(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}
