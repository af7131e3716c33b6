package cases

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Case is one hand-written dump and what is expected of it.
type Case struct {
	Name    string // the file's path under testdata/cases, without .txtar
	Comment string
	Options Options
	Files   []File
	Dirs    []string
	Links   []Link
	// Verdict is the expected verdict, one field a line; Fast the checks
	// only the fast path can answer.
	Verdict []string
	Fast    []string
}

// Options are the analysis options of a case.
type Options struct {
	Strict       bool
	Steps, Ranks []int // nil: all
	Path         string
}

// File is one file of the dump.
type File struct {
	Path string // slash-separated, relative to the dump
	Text string // compact JSON, or the bytes themselves when Raw
	Raw  bool
}

// Link is a symbolic link in the dump.
type Link struct{ Path, Target string }

// Section names of a case file.
const (
	sectionOptions = "options"
	sectionDirs    = "dirs"
	sectionLinks   = "links"
	sectionVerdict = "verdict"
	sectionFast    = "fast"
	rawPrefix      = "raw "
)

// Parse reads a case file.
func Parse(name string, data []byte) (*Case, error) {
	a := parseArchive(data)
	c := &Case{Name: name, Comment: a.comment}
	for _, f := range a.files {
		var err error
		switch {
		case f.name == sectionOptions:
			err = c.Options.parse(lines(f.data))
		case f.name == sectionDirs:
			c.Dirs = lines(f.data)
		case f.name == sectionLinks:
			for _, l := range lines(f.data) {
				p, target, ok := strings.Cut(l, " -> ")
				if !ok {
					return nil, fmt.Errorf("%s: link %q: want NAME -> TARGET", name, l)
				}
				c.Links = append(c.Links, Link{p, target})
			}
		case f.name == sectionVerdict:
			c.Verdict = lines(f.data)
		case f.name == sectionFast:
			c.Fast = lines(f.data)
		case strings.HasPrefix(f.name, rawPrefix):
			// the archive's line end after the file is not the file's
			c.Files = append(c.Files, File{Path: strings.TrimPrefix(f.name, rawPrefix), Text: strings.TrimSuffix(f.data, "\n"), Raw: true})
		default:
			c.Files = append(c.Files, File{Path: f.name, Text: strings.TrimSuffix(f.data, "\n")})
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return c, nil
}

// lines are the non-empty lines of a section.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func (o *Options) parse(settings []string) error {
	for _, s := range settings {
		word, arg, _ := strings.Cut(s, " ")
		var err error
		switch word {
		case "strict":
			o.Strict = true
		case "steps":
			o.Steps, err = intList(arg)
		case "ranks":
			o.Ranks, err = intList(arg)
		case "path":
			o.Path = arg
		default:
			err = errors.New("unknown option")
		}
		if err != nil {
			return fmt.Errorf("option %q: %w", s, err)
		}
	}
	return nil
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("a list of integers: %w", err)
		}
		out = append(out, n)
	}
	return out, nil
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}

// settings are the options as the "options" section writes them.
func (o Options) settings() []string {
	var out []string
	if o.Strict {
		out = append(out, "strict")
	}
	if o.Steps != nil {
		out = append(out, "steps "+joinInts(o.Steps))
	}
	if o.Ranks != nil {
		out = append(out, "ranks "+joinInts(o.Ranks))
	}
	if o.Path != "" {
		out = append(out, "path "+o.Path)
	}
	return out
}

// Format writes the case file.
func (c *Case) Format() []byte {
	a := archive{comment: c.Comment}
	section := func(name string, ls []string) {
		if len(ls) > 0 {
			a.files = append(a.files, archiveFile{name, strings.Join(ls, "\n")})
		}
	}
	section(sectionOptions, c.Options.settings())
	section(sectionDirs, c.Dirs)
	var links []string
	for _, l := range c.Links {
		links = append(links, l.Path+" -> "+l.Target)
	}
	section(sectionLinks, links)
	for _, f := range c.Files {
		name, text := f.Path, f.Text
		if f.Raw {
			name, text = rawPrefix+name, text+"\n"
		}
		a.files = append(a.files, archiveFile{name, text})
	}
	section(sectionVerdict, c.Verdict)
	section(sectionFast, c.Fast)
	return a.format()
}

// Lay writes the dump under root and returns the path the analysis is
// given.
func (c *Case) Lay(root string) (string, error) {
	for _, d := range c.Dirs {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil {
			return "", fmt.Errorf("cases: %s: %w", c.Name, err)
		}
	}
	for _, f := range c.Files {
		text := f.Text
		if !f.Raw {
			laid, err := MsprobeLayout([]byte(f.Text))
			if err != nil {
				return "", fmt.Errorf("cases: %s: %s: %w", c.Name, f.Path, err)
			}
			text = laid
		}
		p := filepath.Join(root, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("cases: %s: %w", c.Name, err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return "", fmt.Errorf("cases: %s: %w", c.Name, err)
		}
	}
	for _, l := range c.Links {
		p := filepath.Join(root, filepath.FromSlash(l.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("cases: %s: %w", c.Name, err)
		}
		if err := os.Symlink(filepath.Join(root, filepath.FromSlash(l.Target)), p); err != nil {
			return "", fmt.Errorf("cases: %s: %w", c.Name, err)
		}
	}
	return filepath.Join(root, filepath.FromSlash(c.Options.Path)), nil
}

// Load reads every case file under dir (testdata/cases), sorted by name.
func Load(dir string) ([]*Case, error) {
	var out []*Case
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".txtar") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("cases: %w", err)
		}
		rel, _ := filepath.Rel(dir, p)
		c, err := Parse(strings.TrimSuffix(filepath.ToSlash(rel), ".txtar"), data)
		if err != nil {
			return fmt.Errorf("cases: %w", err)
		}
		out = append(out, c)
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// FromDir reads a dump written under root into a case's files, folders
// and links: a JSON file that Lay would write again byte for byte is kept
// compact, any other file raw.
func FromDir(root string) (Files []File, Dirs []string, Links []Link, err error) {
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return fmt.Errorf("cases: %w", err)
			}
			if t, err := filepath.Rel(root, target); err == nil && filepath.IsAbs(target) {
				target = t
			}
			Links = append(Links, Link{rel, filepath.ToSlash(target)})
		case d.IsDir():
			if entries, err := os.ReadDir(p); err == nil && len(entries) == 0 {
				Dirs = append(Dirs, rel)
			}
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("cases: %w", err)
			}
			Files = append(Files, fileOf(rel, data))
		}
		return nil
	})
	slices.SortFunc(Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return Files, Dirs, Links, err
}

// fileOf keeps data compact when Lay would write it back as it is.
func fileOf(rel string, data []byte) File {
	if strings.HasSuffix(rel, ".json") {
		if compact, err := compactLayout(data); err == nil {
			if laid, err := MsprobeLayout([]byte(compact)); err == nil && laid == string(data) {
				return File{Path: rel, Text: compact}
			}
		}
	}
	return File{Path: rel, Text: string(data), Raw: true}
}
