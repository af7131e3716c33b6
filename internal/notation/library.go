package notation

import "strings"

// LibraryFile reports whether the file of a stack frame belongs to
// PyTorch, MindSpore, msprobe or the Python runtime rather than to the
// user's training code.
func LibraryFile(file string) bool {
	p := strings.ReplaceAll(file, "\\", "/")
	for _, s := range []string{
		"/msprobe/", "/torch/", "/torch_npu/", "/mindspore/", "/mindtorch/", "/hook_module/",
		"/multiprocessing/", "/threading.py", "/runpy.py", "/concurrent/", "/contextlib.py", "<frozen",
	} {
		if strings.Contains(p, s) {
			return true
		}
	}
	if i := strings.Index(p, "/lib/python"); i >= 0 {
		rest := p[i:]
		if !strings.Contains(rest, "-packages/") {
			return true // the standard library
		}
	}
	return strings.HasPrefix(p, "msprobe/") || strings.HasPrefix(p, "torch/")
}
