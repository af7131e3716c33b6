package msprobe

import (
	"fmt"
	"path"
	"strings"
	"unicode"
)

// Function is user code to register for collection.
type Function struct {
	File string // the source file, as the stack recorded it
	Name string // the function's name
	Line int
	// Prefix is the api_prefix to register it with; "" chooses a short one
	// from the module (see Prefix). A dump that already holds the function
	// gives the prefix its user chose.
	Prefix string
}

// RegisterSnippet writes the Python lines that make msprobe record the
// given functions like its own APIs (debugger.register_custom_api), so that
// the next dump holds their inputs and outputs under the entry names
// "<prefix>.<name>.N.forward|backward". Methods (forward and the like)
// cannot be registered on a module object: for them the lines say to dump
// with level "mix", which records every nn.Module call.
func RegisterSnippet(fns []Function, configPath string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "from msprobe.pytorch import PrecisionDebugger\n\n")
	fmt.Fprintf(&b, "debugger = PrecisionDebugger(config_path=%q)\n", configPath)
	imported := map[string]bool{}
	seen := map[string]bool{}
	for _, f := range fns {
		mod := ModuleOf(f.File)
		key := mod + "." + f.Name
		if seen[key] || f.Name == "" {
			continue
		}
		seen[key] = true
		if isMethodName(f.Name) || strings.ContainsAny(f.Name, "<>") {
			fmt.Fprintf(&b, "# %s (%s:%d) is a method or a nested function: it cannot be registered;\n", f.Name, f.File, f.Line)
			fmt.Fprintf(&b, "# level \"mix\" records the nn.Module calls around it.\n")
			continue
		}
		alias := "m_" + identifier(mod)
		if !imported[mod] {
			imported[mod] = true
			if identifier(mod) == mod && mod != "" && !unicode.IsDigit(rune(mod[0])) {
				fmt.Fprintf(&b, "import %s as %s  # %s: adjust the import to how your code is packaged\n", mod, alias, f.File)
			} else {
				fmt.Fprintf(&b, "import importlib\n%s = importlib.import_module(%q)  # %s: adjust the import to how your code is packaged\n", alias, mod, f.File)
			}
		}
		prefix := f.Prefix
		if prefix == "" {
			prefix = Prefix(mod)
		}
		fmt.Fprintf(&b, "debugger.register_custom_api(%s, %q, api_prefix=%q)", alias, f.Name, prefix)
		if f.Line > 0 {
			fmt.Fprintf(&b, "  # %s:%d", path.Base(f.File), f.Line)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n# then, around each training step:\n#     debugger.start()\n#     ... forward, backward, optimizer.step() ...\n#     debugger.stop()\n#     debugger.step()\n")
	return b.String()
}

// Prefix is the api_prefix msprobe names a registered module's calls
// with: the module's last dotted part, kept short (at most 16
// characters), so that entry names read "prefix.func.N.forward". A prefix
// with a dot would make the entry names ambiguous.
func Prefix(module string) string {
	p := module
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		p = p[i+1:]
	}
	p = identifier(p)
	if len(p) > 16 {
		p = strings.TrimRight(p[:16], "_")
	}
	if p == "" {
		return "custom"
	}
	return p
}

// ModuleOf guesses the import name of a source file: its base name without
// ".py" (a file run as the main script is imported as __main__ instead).
func ModuleOf(file string) string {
	base := strings.TrimSuffix(path.Base(strings.ReplaceAll(file, "\\", "/")), ".py")
	if base == "" || base == "." || base == "/" {
		return "__main__"
	}
	return base
}

// isMethodName: names that are methods of nn.Module subclasses or dunders.
func isMethodName(name string) bool {
	switch name {
	case "forward", "backward", "step", "__call__", "_call_impl", "_wrapped_call_impl":
		return true
	}
	return strings.HasPrefix(name, "__") && strings.HasSuffix(name, "__")
}

func identifier(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
			return r
		}
		return '_'
	}, s)
}
