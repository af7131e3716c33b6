package repro

import (
	"fmt"
	"strings"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/notation"
)

// CallKind is how repro.py calls an API.
type CallKind string

const (
	// CallFunction calls a function: torch.sqrt(...), torch.nn.functional.gelu(...).
	CallFunction CallKind = "function"
	// CallMethod calls a method of the first argument: a.sum(...), a.__mul__(b).
	CallMethod CallKind = "method"
	// CallDistributed is a torch.distributed call: it needs the other
	// ranks, so it cannot be re-run alone.
	CallDistributed CallKind = "distributed"
	// CallCustom is an API registered with register_custom_api (or another
	// prefix repro does not know): repro.py holds a TODO to import it.
	CallCustom CallKind = "custom"
)

// Call says how repro.py calls the API of an entry.
type Call struct {
	Kind CallKind `json:"kind"`
	// Func is the Python callable of a function call ("torch.sqrt",
	// "torch.nn.functional.gelu", "torch_npu.npu_rms_norm",
	// "torch.ops.aten.add"); for CallCustom the name it was registered as.
	Func string `json:"func,omitempty"`
	// Method is the method name of a CallMethod ("sum", "__mul__", "add_").
	Method string `json:"method,omitempty"`
	// Module is a module the call needs besides torch ("torch_npu").
	Module string `json:"module,omitempty"`
	// InPlace: the call writes into its first argument.
	InPlace bool `json:"in_place,omitempty"`
	// Hint is, for CallCustom, a guess at the import to write.
	Hint string `json:"hint,omitempty"`
}

// builtinPrefixes maps msprobe's PyTorch prefixes to the Python module that
// holds their functions.
var builtinPrefixes = map[string]struct{ module, pkg string }{
	"Torch":      {"torch", ""},
	"Functional": {"torch.nn.functional", ""},
	"NPU":        {"torch_npu", "torch_npu"},
	"Aten":       {"torch.ops.aten", ""},
	"VF":         {"torch._VF", ""},
}

// mindSporePrefixes are entry prefixes only MindSpore dumps have.
var mindSporePrefixes = map[string]bool{"Cell": true, "Mint": true, "MintFunctional": true, "MintDistributed": true, "Primitive": true, "Jit": true}

// inPlaceDunders are the Tensor methods that write into self.
var inPlaceDunders = map[string]bool{
	"__iadd__": true, "__isub__": true, "__imul__": true, "__itruediv__": true, "__ifloordiv__": true,
	"__imod__": true, "__ipow__": true, "__iand__": true, "__ior__": true, "__ixor__": true,
	"__ilshift__": true, "__irshift__": true, "__imatmul__": true, "__setitem__": true, "__idiv__": true,
}

// MapAPI says how repro.py calls the API of an entry name.
func MapAPI(n dump.Name) (Call, error) {
	if n.Module {
		return Call{}, fmt.Errorf("%s is a module call: repro re-runs single API calls; dump with level \"L1\" to get the APIs inside it", n.Full)
	}
	if n.Dir != notation.Forward && n.Dir != notation.Backward {
		return Call{}, fmt.Errorf("%q is not an API call entry ({prefix}.{api}.{N}.forward or .backward)", n.Full)
	}
	if first, _, _ := strings.Cut(n.Prefix, "."); mindSporePrefixes[first] {
		return Call{}, fmt.Errorf("%s is a MindSpore call: repro writes PyTorch cases only", n.Full)
	}
	if n.IsDistributed() {
		return Call{Kind: CallDistributed, Func: n.Op()}, nil
	}
	if p, ok := builtinPrefixes[n.Prefix]; ok {
		if !pyIdent(n.API) {
			return Call{}, fmt.Errorf("%s: api name %q is not a Python name", n.Full, n.API)
		}
		return Call{Kind: CallFunction, Func: p.module + "." + n.API, Module: p.pkg, InPlace: isInPlaceName(n.API)}, nil
	}
	if n.Prefix == "Tensor" {
		if !pyIdent(n.API) {
			return Call{}, fmt.Errorf("%s: method name %q is not a Python name", n.Full, n.API)
		}
		return Call{Kind: CallMethod, Method: n.API, InPlace: isInPlaceName(n.API) || inPlaceDunders[n.API]}, nil
	}
	c := Call{Kind: CallCustom, Func: n.Op(), InPlace: isInPlaceName(n.API)}
	if dottedIdent(n.Prefix) && pyIdent(n.API) {
		if strings.HasPrefix(n.Prefix, "_C_") {
			// an op of torch.ops.<namespace>, registered through custom_op_namespaces
			c.Hint = "API = torch.ops." + n.Prefix + "." + n.API
		} else {
			c.Hint = "from " + n.Prefix + " import " + n.API + " as API"
		}
	}
	return c, nil
}

// isInPlaceName: torch's in-place variants end with one underscore.
func isInPlaceName(api string) bool {
	return strings.HasSuffix(api, "_") && !strings.HasSuffix(api, "__")
}

// dottedIdent reports whether s is a dotted Python module path.
func dottedIdent(s string) bool {
	if s == "" {
		return false
	}
	for _, p := range strings.Split(s, ".") {
		if !pyIdent(p) {
			return false
		}
	}
	return true
}
