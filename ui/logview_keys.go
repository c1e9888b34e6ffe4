package ui

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// logKeys are the log pane's keys. In the detail they apply as they are
// (↑/↓ still pick a run there); in full screen ↑/k and ↓/j scroll the log
// a line. While the search's input is open it has every key but ctrl+c.
type logKeys struct {
	PageUp, PageDown, Top, Follow key.Binding
	Search, Filter, Next, Prev    key.Binding
	Times, Wrap, Full, Save       key.Binding
	LineUp, LineDown              key.Binding // full screen only
	Apply, Cancel                 key.Binding // the search's input
	Clear                         key.Binding // esc: out of full screen, then the search off
}

func newLogKeys() logKeys {
	return logKeys{
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "log up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d", " "), key.WithHelp("pgdn", "log down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "log start")),
		Follow:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "follow")),
		Search:   key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "search")),
		Filter:   key.NewBinding(key.WithKeys("&"), key.WithHelp("&", "filter lines")),
		Next:     key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next match")),
		Prev:     key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "prev match")),
		Times:    key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "timestamps")),
		Wrap:     key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "wrap")),
		Full:     key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "full screen")),
		Save:     key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "save to a file")),
		LineUp:   key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "line up")),
		LineDown: key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "line down")),
		Apply:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply")),
		Cancel:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		Clear:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
	}
}

// column is the log's keys for the detail's full help.
func (k logKeys) column() [][]key.Binding {
	return [][]key.Binding{{k.PageUp, k.PageDown, k.Top, k.Follow}, {k.Search, k.Filter, k.Next, k.Prev},
		{k.Times, k.Wrap, k.Full, k.Save}}
}

// ShortHelp implements help.KeyMap: the full screen's keys.
func (k logKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Clear, k.Search, k.Next, k.Follow, k.Times, k.Wrap, k.Save}
}

// FullHelp implements help.KeyMap.
func (k logKeys) FullHelp() [][]key.Binding {
	return append([][]key.Binding{{k.LineUp, k.LineDown, k.Clear}}, k.column()...)
}

// inputKeys are the search input's, for the help while it is open.
type inputKeys struct{ logKeys }

// ShortHelp implements help.KeyMap.
func (k inputKeys) ShortHelp() []key.Binding { return []key.Binding{k.Apply, k.Cancel} }

// FullHelp implements help.KeyMap.
func (k inputKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// key handles a key meant for the log; ok is false for any other.
func (v logView) key(msg tea.KeyMsg) (_ logView, _ tea.Cmd, ok bool) {
	if v.inputFor != 0 {
		v, cmd := v.typed(msg)
		return v, cmd, true
	}
	k := v.keys
	switch {
	case key.Matches(msg, k.PageUp):
		v = v.pageUp()
	case key.Matches(msg, k.PageDown):
		v = v.scroll(v.fitFrom(v.top))
	case key.Matches(msg, k.Top):
		v = v.scroll(-v.top)
	case key.Matches(msg, k.Follow):
		v = v.followEnd()
	case v.full && key.Matches(msg, k.LineUp):
		v = v.scroll(-1)
	case v.full && key.Matches(msg, k.LineDown):
		v = v.scroll(1)
	case key.Matches(msg, k.Search), key.Matches(msg, k.Filter):
		return v.openInput(msg.Runes[0])
	case key.Matches(msg, k.Next):
		v = v.jump(v.find.cur + 1)
	case key.Matches(msg, k.Prev):
		v = v.jump(v.find.cur - 1)
	case key.Matches(msg, k.Times):
		v.stamps = !v.stamps
	case key.Matches(msg, k.Wrap):
		v.wrap = !v.wrap
	case key.Matches(msg, k.Full):
		v.full = !v.full
	case key.Matches(msg, k.Save):
		return v, v.save(), true
	case key.Matches(msg, k.Clear) && v.full:
		v.full = false
	case key.Matches(msg, k.Clear) && v.find.query != "":
		v.find = search{}
		v = v.refilter()
	default:
		return v, nil, false
	}
	return v, nil, true
}

// openInput opens the search's ('/') or the filter's ('&') input, the
// view as it is kept to go back to if it is cancelled.
func (v logView) openInput(r rune) (logView, tea.Cmd, bool) {
	v.inputFor, v.before = r, logPlace{find: v.find, top: v.top, follow: v.follow}
	v.input.Prompt = string(r)
	v.input.Placeholder = "search the output"
	if r == '&' {
		v.input.Placeholder = "show only the lines with"
	}
	v.input.SetValue("")
	return v, v.input.Focus(), true
}

// logPlace is where the view was when the input opened.
type logPlace struct {
	find   search
	top    int
	follow bool
}

// typed handles a key while the input is open: the search follows each
// key, enter keeps it, esc goes back to what was before.
func (v logView) typed(msg tea.KeyMsg) (logView, tea.Cmd) {
	switch {
	case key.Matches(msg, v.keys.Apply):
		v.inputFor = 0
		v.input.Blur()
		return v, nil
	case key.Matches(msg, v.keys.Cancel):
		v.inputFor = 0
		v.input.Blur()
		v.find = v.before.find.over(v.lines)
		v = v.refilter()
		v.top, v.follow = min(v.before.top, v.bottomTop()), v.before.follow
		if v.follow {
			v.top = v.bottomTop()
		}
		return v, nil
	}
	var cmd tea.Cmd
	v.input, cmd = v.input.Update(msg)
	v.find = v.find.with(v.input.Value(), v.inputFor == '&').over(v.lines)
	v = v.refilter()
	v.top, v.follow = min(v.before.top, v.bottomTop()), v.before.follow
	switch {
	case v.follow:
		v.top = v.bottomTop()
	case v.find.filter:
		v.top = 0
	}
	if !v.find.filter {
		v = v.jump(v.firstFrom(v.before.top))
	}
	return v, cmd
}

// noticeMsg is a line for the console's status line.
type noticeMsg struct {
	text string
	err  bool
}

// save writes the lines shown (with a filter, the matching ones) to a new
// file, in the current directory or else the temporary one, as they are
// saved ("STREAM | TEXT"), each after its time when times are on and the
// lines carry them.
func (v logView) save() tea.Cmd {
	lines, times, shown, name := v.lines, v.times, v.shown, v.name
	if !v.stamps {
		times = nil
	}
	return func() tea.Msg {
		var b strings.Builder
		n := 0
		put := func(i int) {
			if times != nil {
				b.WriteString(time.UnixMilli(times[i]).Format("2006-01-02T15:04:05.000Z07:00 "))
			}
			b.WriteString(lines[i])
			b.WriteByte('\n')
			n++
		}
		if shown != nil {
			for _, i := range shown {
				put(i)
			}
		} else {
			for i := range lines {
				put(i)
			}
		}
		path, err := writeNew(logFileName(name), b.String())
		if err != nil {
			return noticeMsg{text: "cannot save the log: " + err.Error(), err: true}
		}
		return noticeMsg{text: "saved " + plural(n, "line") + " to " + path}
	}
}

// logFileName is cronvisor-NAME.log, NAME kept to safe characters.
func logFileName(name string) string {
	return "cronvisor-" + strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return '_'
	}, name) + ".log"
}

// writeNew writes s to a file of that name that did not exist, in the
// current directory, else the temporary one; a taken name gets a number.
func writeNew(name, s string) (string, error) {
	var firstErr error
	for _, dir := range []string{".", os.TempDir()} {
		abs, err := filepath.Abs(dir)
		if err != nil {
			firstErr = cmpErr(firstErr, err)
			continue
		}
		base := strings.TrimSuffix(name, ".log")
		for n := 0; n < 100; n++ {
			p := filepath.Join(abs, name)
			if n > 0 {
				p = filepath.Join(abs, base+"-"+itoa(n)+".log")
			}
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			if err != nil {
				firstErr = cmpErr(firstErr, err)
				break
			}
			_, err = f.WriteString(s)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return p, err
		}
	}
	if firstErr == nil {
		firstErr = errors.New("every name from " + name + " on is taken")
	}
	return "", firstErr
}

// cmpErr keeps the first error.
func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
