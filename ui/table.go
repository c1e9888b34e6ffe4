package ui

import (
	"cmp"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// common is what every view shares: the styles, the store, the clock and
// where saved logs are read. The root model owns it; views hold a pointer
// and only read through it.
type common struct {
	st   styles
	data *store
	now  func() time.Time // the time views measure against: asOf when set
	asOf time.Time        // the moment what the store shows was true, while the source is lost
	lost bool             // the source is lost: logs come from the state dir, if there is one
	// readOnly: no key that changes anything is on (Options.ReadOnly).
	readOnly bool
	// prefsPath is where the jobs table's choices are kept; "": nowhere.
	prefsPath string
	// cells are the jobs table's styled cells, kept between frames.
	cells cellCache
	// readLog is the command that reads a run's saved log.
	readLog func(job, runID string) tea.Cmd
}

// column is one column of a table. A column is at least min wide and
// at most max; want is the width it reads well at. When the wanted widths
// do not fit, the column with the highest drop rank disappears (0: never),
// so a narrow terminal keeps what matters. The columns then grow from min,
// in ascending grow order, first up to want and then up to max.
type column struct {
	title          string
	min, want, max int
	drop, grow     int
}

// cell is a column's text and its style; text is plain so that it can be
// cut to width before styling.
type cell struct {
	text  string
	id    styleID         // the style, by name; a table of many rows caches these
	style *lipgloss.Style // else this one, if any
	marks string          // else a style a character (renderMarked), with id sparkID
}

// colGap separates the columns of a table.
const colGap = 2

// layout gives each column its width in a table width cells wide; 0 means
// the column is hidden.
func layout(cols []column, width int) []int {
	shown := make([]bool, len(cols))
	for i := range cols {
		shown[i] = true
	}
	for {
		need, drop := 0, -1
		for i, c := range cols {
			if !shown[i] {
				continue
			}
			need += c.want + colGap
			if c.drop > 0 && (drop < 0 || c.drop > cols[drop].drop) {
				drop = i
			}
		}
		if need-colGap <= width || drop < 0 {
			break
		}
		shown[drop] = false
	}
	w := make([]int, len(cols))
	left := width + colGap
	var order []int
	for i, c := range cols {
		if shown[i] {
			w[i] = c.min
			left -= c.min + colGap
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cols[a].grow, cols[b].grow) })
	for _, limit := range []func(column) int{func(c column) int { return c.want }, func(c column) int { return c.max }} {
		for _, i := range order {
			add := max(0, min(limit(cols[i])-w[i], left))
			w[i] += add
			left -= add
		}
	}
	return w
}

// row renders cells in the given widths. A selected row drops the cells'
// colours for the selection style, whose background would otherwise be
// broken by each cell's reset.
func row(st styles, cells []cell, widths []int, selected bool, width int) string {
	return cachedRow(st, nil, false, cells, widths, selected, width)
}

// cachedRow is row, with the styled cells that name their style by ID
// taken from cache (grey: the styles are the lost source's).
func cachedRow(st styles, cache *cellCache, grey bool, cells []cell, widths []int, selected bool, width int) string {
	var b strings.Builder
	b.Grow(3 * width) // a styled row: its text and each cell's escapes, in one allocation
	if selected {
		b.WriteString("› ")
	} else {
		b.WriteString("  ")
	}
	first := true
	for i, c := range cells {
		if widths[i] == 0 {
			continue
		}
		if !first {
			b.WriteString(strings.Repeat(" ", colGap))
		}
		first = false
		switch {
		case selected:
			b.WriteString(fit(c.text, widths[i]))
		case c.id != noStyleID && cache != nil:
			b.WriteString(cache.render(st, grey, c, widths[i]))
		case c.style != nil:
			b.WriteString(c.style.Render(fit(c.text, widths[i])))
		case c.marks != "":
			b.WriteString(renderMarked(st, c.text, c.marks, widths[i]))
		default:
			b.WriteString(st.byID(c.id).Render(fit(c.text, widths[i])))
		}
	}
	line := fit(b.String(), width)
	if selected {
		return st.selected.Render(line)
	}
	return line
}

// headerRow renders the column titles.
func headerRow(st styles, cols []column, widths []int, width int) string {
	cells := make([]cell, len(cols))
	for i, c := range cols {
		cells[i] = cell{text: c.title, id: headerID}
	}
	return row(st, cells, widths, false, width)
}

// window is the first row to show so that cursor stays visible in a list
// of n rows shown height at a time, starting from the previous offset.
func window(offset, cursor, height, n int) int {
	if height <= 0 {
		return 0
	}
	if cursor < offset {
		offset = cursor
	}
	if cursor >= offset+height {
		offset = cursor - height + 1
	}
	return max(0, min(offset, n-height))
}

// clamp keeps i in [0, n).
func clamp(i, n int) int {
	return max(0, min(i, n-1))
}

// pad fills s with blank lines to exactly h lines, cutting any excess, so
// that a view never changes the screen's height.
func pad(lines []string, h int) string {
	if h <= 0 {
		return ""
	}
	if len(lines) > h {
		lines = lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}
