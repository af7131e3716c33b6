package htmlreport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// browser is one headless Chromium driven over the DevTools protocol on a
// pipe (--remote-debugging-pipe: commands on fd 3, replies and events on fd
// 4, each message a JSON object ended by a NUL byte). Pages are opened as
// targets of their own, so several load at once in one browser.
type browser struct {
	cmd    *exec.Cmd
	w      io.WriteCloser
	stderr *bytes.Buffer

	mu       sync.Mutex
	next     int
	pending  map[int]chan cdpMessage
	sessions map[string]chan cdpMessage
	done     chan struct{}
	readErr  error
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *cdpError       `json:"error,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// startBrowser starts Chromium with the flags of a quiet, offline, sandbox-
// less headless run.
func startBrowser(path, userDir string) (*browser, error) {
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	b := &browser{w: cmdW, stderr: &bytes.Buffer{}, pending: map[int]chan cdpMessage{},
		sessions: map[string]chan cdpMessage{}, done: make(chan struct{})}
	b.cmd = exec.Command(path, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--hide-scrollbars", "--mute-audio", "--user-data-dir="+userDir, "--remote-debugging-pipe", "about:blank")
	b.cmd.ExtraFiles = []*os.File{cmdR, outW} // fd 3, fd 4
	b.cmd.Stderr = b.stderr
	if err := b.cmd.Start(); err != nil {
		return nil, err
	}
	cmdR.Close()
	outW.Close()
	go b.read(outR)
	return b, nil
}

func (b *browser) read(r io.Reader) {
	defer close(b.done)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			b.readErr = err
			b.mu.Unlock()
			return
		}
		var m cdpMessage
		if err := json.Unmarshal(raw[:len(raw)-1], &m); err != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch := b.pending[m.ID]; ch != nil {
				ch <- m
				delete(b.pending, m.ID)
			}
		} else if m.SessionID != "" {
			ch := b.sessionLocked(m.SessionID)
			select {
			case ch <- m:
			default: // a page that floods events loses the oldest checks, not the browser
			}
		}
		b.mu.Unlock()
	}
}

func (b *browser) sessionLocked(id string) chan cdpMessage {
	ch := b.sessions[id]
	if ch == nil {
		ch = make(chan cdpMessage, 4096)
		b.sessions[id] = ch
	}
	return ch
}

// call sends a command and waits for its reply.
func (b *browser) call(ctx context.Context, session, method string, params any, result any) error {
	if params == nil {
		params = struct{}{}
	}
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	ch := make(chan cdpMessage, 1)
	b.mu.Lock()
	b.next++
	id := b.next
	b.pending[id] = ch
	msg, _ := json.Marshal(cdpMessage{ID: id, Method: method, Params: p, SessionID: session})
	_, err = b.w.Write(append(msg, 0))
	b.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-b.done:
		return fmt.Errorf("%s: the browser went away (%v)", method, b.readErr)
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// close ends the browser, politely first.
func (b *browser) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = b.call(ctx, "", "Browser.close", nil, nil)
	b.w.Close()
	wait := make(chan struct{})
	go func() { b.cmd.Wait(); close(wait) }()
	select {
	case <-wait:
	case <-time.After(10 * time.Second):
		b.cmd.Process.Kill()
		<-wait
	}
}

// maxShotHeight bounds a screenshot: the verdict, the picture, the code and
// the origin timeline of a report fit in it.
const maxShotHeight = 2300

// loaded is a page after its load event: its DOM, what went wrong on it,
// and a screenshot of the whole page when asked for.
type loaded struct {
	dom        string
	problems   []string // exceptions, console errors, failed loads
	screenshot []byte
}

// load opens url in a new target of the given width and waits for its load
// event.
func (b *browser) load(ctx context.Context, url string, width int, shot bool) (*loaded, error) {
	return b.loadThen(ctx, url, width, shot, nil)
}

// tab is a loaded page, for what a test does on it after its load event.
type tab struct {
	b       *browser
	session string
}

// eval runs a JavaScript expression in the page and returns its value as
// JSON.
func (p *tab) eval(ctx context.Context, expr string) (json.RawMessage, error) {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := p.b.call(ctx, p.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r); err != nil {
		return nil, err
	}
	if r.ExceptionDetails != nil {
		return nil, fmt.Errorf("evaluate %q: %s", expr, r.ExceptionDetails.Text)
	}
	return r.Result.Value, nil
}

// click presses and releases the left button at a point of the viewport, as
// a user's click does.
func (p *tab) click(ctx context.Context, x, y float64) error {
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		ev := map[string]any{"type": typ, "x": x, "y": y, "button": "left", "clickCount": 1}
		if typ == "mouseMoved" {
			ev["button"] = "none"
		}
		if err := p.b.call(ctx, p.session, "Input.dispatchMouseEvent", ev, nil); err != nil {
			return err
		}
	}
	return nil
}

// loadThen is load, with then run on the page before it closes.
func (b *browser) loadThen(ctx context.Context, url string, width int, shot bool, then func(*tab) error) (*loaded, error) {
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return nil, err
	}
	defer b.call(context.Background(), "", "Target.closeTarget", map[string]any{"targetId": target.TargetID}, nil)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
		return nil, err
	}
	s := attached.SessionID
	b.mu.Lock()
	events := b.sessionLocked(s)
	b.mu.Unlock()
	for _, m := range []string{"Runtime.enable", "Log.enable", "Page.enable"} {
		if err := b.call(ctx, s, m, nil, nil); err != nil {
			return nil, err
		}
	}
	metrics := map[string]any{"width": width, "height": 1000, "deviceScaleFactor": 1, "mobile": false}
	if err := b.call(ctx, s, "Emulation.setDeviceMetricsOverride", metrics, nil); err != nil {
		return nil, err
	}
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := b.call(ctx, s, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return nil, err
	}
	if nav.ErrorText != "" {
		return nil, fmt.Errorf("navigate %s: %s", url, nav.ErrorText)
	}
	out := &loaded{}
	watch := func(m cdpMessage) bool {
		switch m.Method {
		case "Page.loadEventFired":
			return true
		case "Runtime.exceptionThrown":
			var p struct {
				ExceptionDetails struct {
					Text      string `json:"text"`
					Exception struct {
						Description string `json:"description"`
					} `json:"exception"`
				} `json:"exceptionDetails"`
			}
			json.Unmarshal(m.Params, &p)
			out.problems = append(out.problems, "exception: "+p.ExceptionDetails.Text+" "+p.ExceptionDetails.Exception.Description)
		case "Runtime.consoleAPICalled":
			var p struct {
				Type string `json:"type"`
				Args []struct {
					Value       any    `json:"value"`
					Description string `json:"description"`
				} `json:"args"`
			}
			json.Unmarshal(m.Params, &p)
			if p.Type == "error" || p.Type == "assert" {
				var parts []string
				for _, a := range p.Args {
					parts = append(parts, fmt.Sprint(a.Value, a.Description))
				}
				out.problems = append(out.problems, "console."+p.Type+": "+strings.Join(parts, " "))
			}
		case "Log.entryAdded":
			var p struct {
				Entry struct {
					Level, Text, URL string
				} `json:"entry"`
			}
			json.Unmarshal(m.Params, &p)
			if p.Entry.Level == "error" {
				out.problems = append(out.problems, "log: "+p.Entry.Text+" "+p.Entry.URL)
			}
		}
		return false
	}
	for done := false; !done; {
		select {
		case m := <-events:
			done = watch(m)
		case <-b.done:
			return nil, errors.New("the browser went away while the page loaded")
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s to load: %w", url, ctx.Err())
		}
	}
	var eval struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
	}
	if err := b.call(ctx, s, "Runtime.evaluate", map[string]any{"expression": "document.documentElement.outerHTML", "returnByValue": true}, &eval); err != nil {
		return nil, err
	}
	out.dom = eval.Result.Value
	if shot {
		var lm struct {
			CSSContentSize struct {
				Height float64 `json:"height"`
			} `json:"cssContentSize"`
		}
		if err := b.call(ctx, s, "Page.getLayoutMetrics", nil, &lm); err != nil {
			return nil, err
		}
		metrics["height"] = min(int(lm.CSSContentSize.Height)+1, maxShotHeight)
		if err := b.call(ctx, s, "Emulation.setDeviceMetricsOverride", metrics, nil); err != nil {
			return nil, err
		}
		var img struct {
			Data string `json:"data"`
		}
		if err := b.call(ctx, s, "Page.captureScreenshot", map[string]any{"format": "png"}, &img); err != nil {
			return nil, err
		}
		png, err := base64.StdEncoding.DecodeString(img.Data)
		if err != nil {
			return nil, err
		}
		out.screenshot = png
	}
	// what the test does on the page comes after the screenshot, which
	// shows the page as it opens
	if then != nil {
		if err := then(&tab{b: b, session: s}); err != nil {
			return nil, err
		}
	}
	// events that arrived with the last replies
	for more := true; more; {
		select {
		case m := <-events:
			watch(m)
		default:
			more = false
		}
	}
	return out, nil
}

// checkProtocol loads a page with a console error and an exception, and
// checks that both are seen: a clean report's silence means something.
func checkProtocol(t *testing.T, b *browser) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	page := t.TempDir() + "/bad.html"
	if err := os.WriteFile(page, []byte(`<!DOCTYPE html><html><body><p id="x">fine</p><script>console.error("boom"); undefinedCall();</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := b.load(ctx, "file://"+page, 800, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.problems) != 2 || !strings.Contains(got.problems[0], "boom") || !strings.Contains(got.problems[1], "undefinedCall") {
		t.Errorf("problems %q, want the console error and the exception", got.problems)
	}
	if !strings.Contains(got.dom, `<p id="x">fine</p>`) {
		t.Errorf("dom %q", got.dom)
	}
}
