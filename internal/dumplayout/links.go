package dumplayout

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Link is a folder of a dump that is a symbolic link. msprobe writes real
// folders; a dump spread over several disks links them back
// (dump_path/step3 -> /disk2/step3, step3/rank5 -> /nvme1/rank5), and
// they are read as if they were real.
type Link struct {
	Path   string // the folder as the dump names it, under Layout.Root
	Target string // the folder it leads to, every link on the way resolved
}

// followed is what a folder entry turned out to be.
type followed int

const (
	notFolder  followed = iota // a file, or anything else that is not read
	folder                     // a folder, or a symbolic link to one
	brokenLink                 // a symbolic link that leads to no folder
)

// IsFolder reports whether the entry e of dir is a folder or a symbolic
// link to one.
func IsFolder(dir string, e fs.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	info, err := os.Stat(filepath.Join(dir, e.Name()))
	return err == nil && info.IsDir()
}

// follow tells whether the entry e of dir is a folder to read, and when
// it is a symbolic link to one, the link (Path "" otherwise), which the
// caller records in Links once it reads the folder. A link that cannot be
// followed (it leads nowhere, or round in a loop) or that leads to
// something else than a folder is a note naming it.
func (l *Layout) follow(dir string, e fs.DirEntry) (followed, Link) {
	if e.IsDir() {
		return folder, Link{}
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return notFolder, Link{}
	}
	path := filepath.Join(dir, e.Name())
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		l.note(path, "%s: a symbolic link that cannot be followed (%v)", path, err)
		return brokenLink, Link{}
	}
	info, err := os.Stat(target)
	if err != nil || !info.IsDir() {
		l.note(path, "%s: a symbolic link to %s, which is not a folder", path, target)
		return brokenLink, Link{}
	}
	return folder, Link{Path: path, Target: target}
}

// used records a link whose folder is read; a Path of "" is none.
func (l *Layout) used(link Link) {
	if link.Path != "" {
		l.Links = append(l.Links, link)
	}
}

// rootLink records the folder given to Discover when it is a symbolic
// link.
func (l *Layout) rootLink(path string) {
	path = filepath.Clean(path) // "step3/" would name the folder the link leads to
	info, err := os.Lstat(path)
	if err != nil || info.Mode()&fs.ModeSymlink == 0 {
		return
	}
	if target, err := filepath.EvalSymlinks(path); err == nil {
		l.used(Link{Path: path, Target: target})
	}
}

// rankFolderName reports whether name is one msprobe gives a rank folder:
// rankN, "rank" (8.x, without torch.distributed) or procPID (26.x).
func rankFolderName(name string) bool {
	return name == "rank" || isNumbered(name, "rank") || isNumbered(name, "proc")
}
