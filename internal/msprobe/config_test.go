package msprobe

import (
	"encoding/json"
	"flag"
	"github.com/nanhunt/nanhunt/internal/fixturedir"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The configs of the real msprobe runs behind the shared fixtures pass.
func TestValidateRealConfigs(t *testing.T) {
	root := fixturedir.Dir(t, "msprobe-generated")
	files, _ := filepath.Glob(filepath.Join(root, "*", "msprobe-config", "*.json"))
	if len(files) == 0 {
		t.Fatalf("no msprobe configs under %s", root)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := Validate(data); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		var c Config
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		again, err := c.Indented()
		if err != nil {
			t.Fatal(err)
		}
		if err := Validate(again); err != nil {
			t.Errorf("%s rewritten: %v", f, err)
		}
	}
}

func TestValidateRejects(t *testing.T) {
	for _, tc := range []struct{ name, config, want string }{
		{"not json", `{"task":`, "not a JSON object"},
		{"no dump_path", `{"task":"statistics","level":"L1"}`, "dump_path"},
		{"bad task", `{"task":"nanhunt","dump_path":"/d"}`, "task \"nanhunt\""},
		{"bad level", `{"dump_path":"/d","level":"L3"}`, "level L3"},
		{"unknown key", `{"dump_path":"/d","steps":[1]}`, "unknown key \"steps\""},
		{"negative rank", `{"dump_path":"/d","rank":[-1]}`, "rank"},
		{"bad range", `{"dump_path":"/d","step":["6-4"]}`, "step"},
		{"rank not a list", `{"dump_path":"/d","rank":3}`, "rank: must be a list"},
		{"section mismatch", `{"task":"tensor","dump_path":"/d","statistics":{}}`, "does not match"},
		{"bad data_mode", `{"task":"tensor","dump_path":"/d","tensor":{"data_mode":["everything"]}}`, "data_mode \"everything\""},
		{"bad summary_mode", `{"dump_path":"/d","statistics":{"summary_mode":"max"}}`, "summary_mode"},
		{"scope of one", `{"dump_path":"/d","statistics":{"scope":["Torch.sqrt.0.forward"]}}`, "scope holds 1"},
		{"unknown section key", `{"dump_path":"/d","statistics":{"lists":[]}}`, "lists is not a key"},
		{"bool as string", `{"dump_path":"/d","async_dump":"false"}`, "async_dump"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate([]byte(tc.config))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate(%s) = %v, want an error about %q", tc.config, err, tc.want)
			}
		})
	}
	ok := `{"task":"tensor","dump_path":"/d","rank":[0,"2-3"],"step":["5"],"level":"mix","risk_level":"ALL","tensor":{"scope":[],"list":["Torch.sqrt"],"data_mode":["forward","input"],"summary_mode":"md5"}}`
	if err := Validate([]byte(ok)); err != nil {
		t.Errorf("Validate(%s) = %v", ok, err)
	}
}

func TestConfigGolden(t *testing.T) {
	c := Config{
		Task: "tensor", DumpPath: "./nanhunt_followup", Rank: []int{2, 0}, Step: []int{5}, Level: "L1", ExtraInfo: true,
		Section: Section{List: []string{"Torch.sqrt", "Tensor.__mul__"}, DataMode: []string{"all"}, SummaryMode: "statistics"},
	}
	got, err := c.Indented()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "tensor_config.golden", got)
	if err := Validate(got); err != nil {
		t.Fatal(err)
	}
	var back Config
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	back.Section.Scope = nil
	if !reflect.DeepEqual(back, c) {
		t.Errorf("read back %+v, want %+v", back, c)
	}
}

func TestRegisterSnippet(t *testing.T) {
	got := RegisterSnippet([]Function{
		{File: "/job/model/rotary.py", Name: "apply_rotary", Line: 41},
		{File: "/job/model/rotary.py", Name: "apply_rotary", Line: 41},
		{File: "/job/model/rotary.py", Name: "build_cache", Line: 12},
		{File: "/job/train.py", Name: "forward", Line: 88},
		{File: "/job/model/my-ops.py", Name: "fused", Line: 3},
	}, "./config.json")
	golden(t, "register.golden", []byte(got))
	if n := strings.Count(got, "register_custom_api("); n != 3 {
		t.Errorf("%d registrations, want 3 (the duplicate and the method left out)", n)
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs:\n got:\n%s\nwant:\n%s", name, got, want)
	}
}

// FuzzConfig: whatever config is built from the fuzzer's values, the file
// written is valid for msprobe exactly when its parts are, and reads back
// to the same config.
func FuzzConfig(f *testing.F) {
	f.Add("tensor", "/d", 5, 2, "L1", "Torch.sqrt", "all", "statistics")
	f.Add("statistics", "", -1, 0, "mix", "", "input", "xor")
	f.Fuzz(func(t *testing.T, task, dumpPath string, step, rank int, level, list, mode, summary string) {
		c := Config{Task: task, DumpPath: dumpPath, Step: []int{step}, Rank: []int{rank}, Level: level,
			Section: Section{List: []string{list}, DataMode: []string{mode}, SummaryMode: summary}}
		data, err := c.Indented()
		text := utf8.ValidString(task) && utf8.ValidString(dumpPath) && utf8.ValidString(level) && utf8.ValidString(list) &&
			utf8.ValidString(mode) && utf8.ValidString(summary)
		if (err == nil) != text {
			t.Fatalf("Indented: %v, for strings that are UTF-8: %v", err, text)
		}
		if err != nil {
			return // config.json cannot hold it: refused, not rewritten
		}
		wantOK := tasks[task] && dumpPath != "" && step >= 0 && rank >= 0 && levels[level] &&
			dataModes[mode] && summaryModes[summary]
		if err := Validate(data); (err == nil) != wantOK {
			t.Fatalf("Validate(%s) = %v, want ok=%v", data, err, wantOK)
		}
		if !wantOK {
			return
		}
		var back Config
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		back.Section.Scope = nil
		if !reflect.DeepEqual(back, c) {
			t.Fatalf("read back %+v, want %+v", back, c)
		}
	})
}

// The prefix a registered function's calls are named with is short and
// has no dot; a function without a line gets no comment.
func TestRegisterPrefix(t *testing.T) {
	for _, tt := range []struct{ module, want string }{
		{"rotary", "rotary"},
		{"moe_ext.kernels", "kernels"},
		{"my-ops", "my_ops"},
		{"fused_attention_kernels_for_transformer_blocks", "fused_attention"},
		{"", "custom"},
	} {
		if got := Prefix(tt.module); got != tt.want || strings.Contains(got, ".") || len(got) > 16 {
			t.Errorf("Prefix(%q) = %q, want %q", tt.module, got, tt.want)
		}
	}
	s := RegisterSnippet([]Function{{File: "kernels.py", Name: "fused", Prefix: "MyKern"}}, "c.json")
	if !strings.Contains(s, `api_prefix="MyKern")`+"\n") || strings.Contains(s, "# line") {
		t.Errorf("snippet:\n%s", s)
	}
}
