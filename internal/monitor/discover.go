package monitor

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Kinds of monitor record, named after TrainerMon's file prefixes;
// monitor_v2's scopes map onto the same names.
const (
	KindActv          = "actv"           // forward module inputs and outputs
	KindActvGrad      = "actv_grad"      // backward: gradients of module outputs and inputs
	KindGradUnreduced = "grad_unreduced" // weight gradients before data-parallel reduction
	KindGradReduced   = "grad_reduced"   // weight gradients after reduction
	KindExpAvg        = "exp_avg"        // optimizer first moment
	KindExpAvgSq      = "exp_avg_sq"     // optimizer second moment
	KindParamOrigin   = "param_origin"   // weights before optimizer.step
	KindParamUpdated  = "param_updated"  // weights after optimizer.step
)

// kind is the index of a Kind* name.
type kind int8

const (
	kActv kind = iota
	kActvGrad
	kGradUnreduced
	kGradReduced
	kExpAvg
	kExpAvgSq
	kParamOrigin
	kParamUpdated
	numKinds
	kModuleV2 kind = -2 // monitor_v2 files whose rows say their kind in "scope"
	kNone     kind = -1
)

var kindNames = [numKinds]string{KindActv, KindActvGrad, KindGradUnreduced, KindGradReduced, KindExpAvg, KindExpAvgSq, KindParamOrigin, KindParamUpdated}

func (k kind) String() string {
	if k >= 0 && k < numKinds {
		return kindNames[k]
	}
	return ""
}

// activation reports whether rows of this kind describe module calls.
func (k kind) activation() bool { return k == kActv || k == kActvGrad }

// v2Scope maps monitor_v2's scope column onto kinds; "comm" rows are
// skipped.
var v2Scope = map[string]kind{
	"forward":       kActv,
	"backward":      kActvGrad,
	"unreduced":     kGradUnreduced,
	"reduced":       kGradReduced,
	"exp_avg":       kExpAvg,
	"exp_avg_sq":    kExpAvgSq,
	"param_origin":  kParamOrigin,
	"param_updated": kParamUpdated,
	"comm":          kNone,
}

// Folder is one rank folder of monitor output.
type Folder struct {
	Path       string // relative to Run.Root, slash separated; "." for the root itself
	Rank       int
	Generation string // "v1" (TrainerMon) or "v2" (monitor_v2)
	Stamp      string // TrainerMon's creation time stamp (%b%d_%H-%M-%S); "" for v2
	Files      []File
}

// File is one CSV file the reader uses.
type File struct {
	Path  string // relative to Run.Root, slash separated
	Kind  string // a Kind* name; "module", "weight_grad", "optimizer", "param" for monitor_v2 files
	Start int    // first step of the file name's range
	End   int    // last step of the file name's range
	kind  kind
}

var (
	// Dec03_21-34-40-rank0-1a2b3c4d
	reV1Folder = regexp.MustCompile(`^(.*)-rank(\d+)-([0-9A-Za-z]+)$`)
	reStamp    = regexp.MustCompile(`^([A-Za-z]{3})(\d{1,2})_(\d{1,2})-(\d{1,2})-(\d{1,2})$`)
	reV2Folder = regexp.MustCompile(`^rank_(\d+)$`)
	reV1File   = regexp.MustCompile(`^(actv_grad|actv|grad_unreduced|grad_reduced|exp_avg_sq|efxp_avg_sq|exp_avg|param_origin|param_updated)_(\d+)-(\d+)\.csv$`)
	reV2File   = regexp.MustCompile(`^(module|weight_grad|optimizer|param)_step(\d+)-(\d+)\.csv$`)
)

var v1FileKind = map[string]kind{
	"actv": kActv, "actv_grad": kActvGrad, "grad_unreduced": kGradUnreduced, "grad_reduced": kGradReduced,
	"exp_avg": kExpAvg, "exp_avg_sq": kExpAvgSq, "efxp_avg_sq": kExpAvgSq,
	"param_origin": kParamOrigin, "param_updated": kParamUpdated,
}

var months = map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}

// stampKey orders TrainerMon time stamps (month, day, time; the year is
// not written, so a run across New Year sorts wrong). Unreadable stamps
// sort first.
func stampKey(stamp string) int64 {
	m := reStamp.FindStringSubmatch(stamp)
	if m == nil {
		return -1
	}
	mon := months[strings.ToLower(m[1])]
	var n [4]int64
	for i := range n {
		v, _ := strconv.Atoi(m[i+2])
		n[i] = int64(v)
	}
	return (((int64(mon)*32+n[0])*24+n[1])*60+n[2])*60 + n[3]
}

// folderOf recognises a rank folder by its name.
func folderOf(name string) (Folder, bool) {
	if m := reV2Folder.FindStringSubmatch(name); m != nil {
		r, err := strconv.Atoi(m[1])
		if err == nil {
			return Folder{Rank: r, Generation: "v2"}, true
		}
	}
	if m := reV1Folder.FindStringSubmatch(name); m != nil {
		r, err := strconv.Atoi(m[2])
		if err == nil {
			return Folder{Rank: r, Generation: "v1", Stamp: m[1]}, true
		}
	}
	return Folder{}, false
}

// monitorFile recognises a CSV file the analysis reads.
func monitorFile(name string) (File, bool) {
	if m := reV1File.FindStringSubmatch(name); m != nil {
		s, err1 := strconv.Atoi(m[2])
		e, err2 := strconv.Atoi(m[3])
		if err1 == nil && err2 == nil {
			k := v1FileKind[m[1]]
			return File{Kind: k.String(), Start: s, End: e, kind: k}, true
		}
	}
	if m := reV2File.FindStringSubmatch(name); m != nil {
		s, err1 := strconv.Atoi(m[2])
		e, err2 := strconv.Atoi(m[3])
		if err1 == nil && err2 == nil {
			return File{Kind: m[1], Start: s, End: e, kind: kModuleV2}, true
		}
	}
	return File{}, false
}

// contains reports whether the file's step range holds step.
func (f File) contains(step int) bool { return f.Start <= step && step <= f.End }

// filesIn lists the monitor CSV files of a folder, by kind and step.
func filesIn(abs, rel string) ([]File, error) {
	ents, err := os.ReadDir(abs)
	if err != nil {
		return nil, err
	}
	var out []File
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		f, ok := monitorFile(e.Name())
		if !ok {
			continue
		}
		f.Path = joinRel(rel, e.Name())
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		return a.Path < b.Path
	})
	return out, nil
}

func joinRel(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
}

// discover finds the rank folders under root: root itself when it is a
// rank folder (or holds monitor files), else its sub-folders named like
// rank folders, else those one level further down.
func discover(root string) ([]Folder, []Warning, error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, nil, fmt.Errorf("open monitor output: %w", err)
	}
	if !info.IsDir() {
		return nil, nil, fmt.Errorf("open monitor output %s: not a folder", root)
	}
	var warns []Warning
	files, err := filesIn(root, ".")
	if err != nil {
		return nil, nil, fmt.Errorf("read monitor output: %w", err)
	}
	if f, ok := folderOf(filepath.Base(filepath.Clean(root))); ok || len(files) > 0 {
		if !ok {
			f = Folder{Generation: "v1"}
			if len(files) > 0 && files[0].kind == kModuleV2 {
				f.Generation = "v2"
			}
			warns = append(warns, Warning{File: ".", Message: "folder name does not say the rank: taken as rank 0"})
		}
		f.Path = "."
		f.Files = files
		return []Folder{f}, warns, nil
	}
	folders, err := rankFolders(root, ".", &warns)
	if err != nil {
		return nil, nil, fmt.Errorf("read monitor output: %w", err)
	}
	if len(folders) == 0 {
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			if !e.IsDir() || skipDir(e.Name()) {
				continue
			}
			sub, err := rankFolders(filepath.Join(root, e.Name()), e.Name(), &warns)
			if err == nil {
				folders = append(folders, sub...)
			}
		}
	}
	if len(folders) == 0 {
		return nil, nil, fmt.Errorf("no monitor output in %s: no rank folder (<time>-rank<N>-<id> or rank_<N>) and no monitor csv file", root)
	}
	sort.SliceStable(folders, func(i, j int) bool {
		a, b := folders[i], folders[j]
		if a.Rank != b.Rank {
			return a.Rank < b.Rank
		}
		if a.Generation != b.Generation {
			return a.Generation < b.Generation
		}
		if ka, kb := stampKey(a.Stamp), stampKey(b.Stamp); ka != kb {
			return ka < kb
		}
		return a.Path < b.Path
	})
	for i := 0; i < len(folders); {
		j := i
		for j < len(folders) && folders[j].Rank == folders[i].Rank {
			j++
		}
		if j-i > 1 {
			var names []string
			for _, f := range folders[i:j] {
				names = append(names, f.Path)
			}
			warns = append(warns, Warning{File: folders[i].Path, Message: fmt.Sprintf("rank %d has %d folders (a restart?): all are read, in time-stamp order: %s", folders[i].Rank, j-i, strings.Join(names, ", "))})
		}
		i = j
	}
	for _, f := range folders {
		if len(f.Files) == 0 && !hasWarning(warns, f.Path) {
			warns = append(warns, Warning{File: f.Path, Message: "no monitor csv file in this rank folder"})
		}
	}
	return folders, warns, nil
}

// skipDir tells the folders TrainerMon writes next to the rank folders.
func skipDir(name string) bool {
	return name == "anomaly_detected" || name == "module_struct" || strings.HasPrefix(name, ".")
}

func rankFolders(abs, rel string, warns *[]Warning) ([]Folder, error) {
	ents, err := os.ReadDir(abs)
	if err != nil {
		return nil, err
	}
	var out []Folder
	for _, e := range ents {
		if !e.IsDir() || skipDir(e.Name()) {
			continue
		}
		f, ok := folderOf(e.Name())
		if !ok {
			continue
		}
		f.Path = joinRel(rel, e.Name())
		files, err := filesIn(filepath.Join(abs, e.Name()), f.Path)
		if err != nil {
			*warns = append(*warns, Warning{File: f.Path, Message: fmt.Sprintf("cannot list the folder: %v", err)})
		}
		f.Files = files
		out = append(out, f)
	}
	return out, nil
}

func hasWarning(ws []Warning, file string) bool {
	for _, w := range ws {
		if w.File == file && strings.HasPrefix(w.Message, "cannot list") {
			return true
		}
	}
	return false
}
