package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/internal/fsjson"
)

// A mark is a small file in the folder the nodes of a run share,
// .nanhunt-lasting-<run>-<job>-<node>.json: a node whose own ranks showed an
// anomaly that lasts leaves one, naming the step after which no step can
// change the verdict, and the other nodes of the same job stop after it.
// A mark belongs to one job (Job): a mark of another job, such as one an
// earlier job of the same run left in the folder, is never followed, and
// is removed. A job whose nodes share no id leaves and follows none, and
// removes every mark of its run: a mark is only ever left by a job with a
// shared id, so none of them is its own.
type lastingMarkFile struct {
	Run   fsjson.String `json:"run"` // byte for byte: by default the dump path
	Job   string        `json:"job"`
	Mode  string        `json:"mode"`
	After int           `json:"after"`
	Node  string        `json:"node"`
}

// markRef names, in a summary's end line, the mark that stopped its node.
type markRef struct {
	Node string `json:"node"`
	Job  string `json:"job"`
}

// maxMarkBytes bounds what is read of a file named as a mark.
const maxMarkBytes = 4096

// markBoard is the shared folder's marks as the nodes of one job of a run
// use them. Without a folder it does nothing; without a job id the nodes
// share, it leaves and follows no mark (a node could not tell a mark of its
// own job from one an earlier job left) and only removes the run's marks.
type markBoard struct {
	dir string
	run string
	job Job
}

// on reports whether the board leaves and follows marks.
func (b markBoard) on() bool { return b.dir != "" && b.job.Shared() }

// ours reports whether a mark of the run is one of the job's own.
func (b markBoard) ours(m lastingMarkFile) bool { return b.job.Shared() && m.Job == b.job.ID }

// hashed is the first 12 hex digits of the SHA-256 of s.
func hashed(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:6])
}

// markPrefix starts the names of the run's marks, whatever their job.
func markPrefix(run string) string { return ".nanhunt-lasting-" + hashed(run) + "-" }

// nodeName is how a mark names the node that left it.
func nodeName(n Node) string {
	if n.Index >= 0 {
		return "node " + strconv.Itoa(n.Index)
	}
	return n.Host
}

// leave writes the mark of a lasting anomaly for the other nodes of the
// job; a mark that cannot be written only costs them the steps after it.
func (b markBoard) leave(mode string, after int, n Node) {
	if !b.on() {
		return
	}
	who := nodeName(n)
	data, _ := json.Marshal(lastingMarkFile{Run: fsjson.String(b.run), Job: b.job.ID, Mode: mode, After: after, Node: who})
	name := markPrefix(b.run) + hashed(b.job.ID) + "-" + SafeName(who) + ".json"
	f, err := os.CreateTemp(b.dir, ".tmp-mark-*")
	if err != nil {
		return
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr != nil || cerr != nil {
		os.Remove(f.Name())
		return
	}
	if err := os.Rename(f.Name(), filepath.Join(b.dir, name)); err != nil {
		os.Remove(f.Name())
	}
}

// earliest is the earliest step after which another node of the job saw
// an anomaly last, in this mode. Marks of the run that another job left
// are removed on the way (their names are returned), and nothing else.
func (b markBoard) earliest(mode string) (after int, by markRef, ok bool, removed []string) {
	if b.dir == "" {
		return 0, markRef{}, false, nil
	}
	ents, err := os.ReadDir(b.dir)
	if err != nil {
		return 0, markRef{}, false, nil
	}
	for _, e := range ents {
		m, isMark := b.read(e)
		switch {
		case !isMark || string(m.Run) != b.run:
			continue
		case !b.ours(m):
			if os.Remove(filepath.Join(b.dir, e.Name())) == nil {
				removed = append(removed, e.Name())
			}
		case m.Mode == mode && (!ok || m.After < after):
			after, by, ok = m.After, markRef{Node: m.Node, Job: m.Job}, true
		}
	}
	return after, by, ok, removed
}

// read reads a folder entry as a mark of the run: a regular file (not a
// link) named as one, small, holding a mark.
func (b markBoard) read(e os.DirEntry) (lastingMarkFile, bool) {
	var m lastingMarkFile
	if !strings.HasPrefix(e.Name(), markPrefix(b.run)) || !e.Type().IsRegular() {
		return m, false
	}
	info, err := e.Info()
	if err != nil || !info.Mode().IsRegular() || info.Size() > maxMarkBytes {
		return m, false
	}
	data, err := os.ReadFile(filepath.Join(b.dir, e.Name()))
	if err != nil || len(data) > maxMarkBytes || json.Unmarshal(data, &m) != nil {
		return m, false
	}
	return m, true
}
