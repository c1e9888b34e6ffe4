// Package exepages hands back the mappings of the executable's pages
// that start-up touched and a resident daemon will not touch again.
//
// A Go executable is mapped from its file: every page that start-up
// reads (each package's initialisers, the command line's parsing,
// jobs.yaml's decoding) stays mapped, and the kernel maps the pages
// around each one it faults in too. For a daemon that then sleeps
// between fires that is most of the binary, counted in its RSS and kept
// from reclaim as mapped executable pages, though it will not run again.
// Release drops those mappings: the pages stay in the page cache, shared
// and reclaimable, and whatever runs again faults its pages back in.
package exepages

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Mapping is one range of the executable's file mapped privately and
// read-only with no private copy of a page (no anonymous page): every
// page of it is the file's, so dropping its pages loses nothing. A page
// may still be dirty in the page cache (a binary just built), which
// smaps counts as Private_Dirty; that is the file's page, not a copy.
type Mapping struct {
	Start, End uintptr
	Perms      string
}

// Release drops the mappings of the executable's clean read-only pages
// (its code and read-only data; never its writable data) and returns the
// bytes of address space it advised.
func Release() (int64, error) {
	exe, err := executable()
	if err != nil {
		return 0, fmt.Errorf("exepages: %w", err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, fmt.Errorf("exepages: %w", err)
	}
	maps, err := cleanMappings(f, exe)
	f.Close()
	if err != nil {
		return 0, fmt.Errorf("exepages: /proc/self/smaps: %w", err)
	}
	var n int64
	for _, m := range maps {
		// MADV_DONTNEED on a private file mapping without private
		// copies: the next access reads the same page from the cache.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.Start, m.End-m.Start, unix.MADV_DONTNEED); errno != 0 {
			return n, fmt.Errorf("exepages: madvise %x-%x: %w", m.Start, m.End, errno)
		}
		n += int64(m.End - m.Start)
	}
	return n, nil
}

// file names a mapped file as smaps does: its device (major:minor, in
// hex) and inode, which hold when its path has spaces or was replaced
// (an upgrade's new binary at the same path: " (deleted)").
type file struct{ dev, inode string }

func executable() (file, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/exe", &st); err != nil {
		return file{}, &os.PathError{Op: "stat", Path: "/proc/self/exe", Err: err}
	}
	return file{dev: fmt.Sprintf("%02x:%02x", unix.Major(st.Dev), unix.Minor(st.Dev)),
		inode: strconv.FormatUint(st.Ino, 10)}, nil
}

// cleanMappings reads smaps and returns the mappings of exe that are
// private, not writable, without an anonymous (copied) page.
func cleanMappings(r io.Reader, exe file) ([]Mapping, error) {
	var out []Mapping
	var cur *Mapping
	clean := false
	flush := func() {
		if cur != nil && clean {
			out = append(out, *cur)
		}
		cur = nil
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Bytes()
		if m, ok := header(line, exe); ok {
			flush()
			cur, clean = m, m != nil
			continue
		}
		if cur == nil {
			continue
		}
		if key, kb, ok := field(line); ok && kb != 0 {
			switch key {
			case "Anonymous", "Swap":
				clean = false
			}
		}
	}
	flush()
	return out, sc.Err()
}

// header parses an smaps mapping line ("start-end perms offset dev inode
// path"): ok says it is one; the mapping is nil unless it maps exe
// privately without write permission.
func header(line []byte, exe file) (m *Mapping, ok bool) {
	f := bytes.Fields(line)
	if len(f) < 5 || bytes.IndexByte(f[0], '-') < 0 || len(f[1]) != 4 {
		return nil, false
	}
	lo, hi, found := bytes.Cut(f[0], []byte("-"))
	start, err1 := strconv.ParseUint(string(lo), 16, 64)
	end, err2 := strconv.ParseUint(string(hi), 16, 64)
	if !found || err1 != nil || err2 != nil {
		return nil, false
	}
	perms := string(f[1])
	if string(f[3]) != exe.dev || string(f[4]) != exe.inode || perms[1] == 'w' || perms[3] != 'p' {
		return nil, true
	}
	return &Mapping{Start: uintptr(start), End: uintptr(end), Perms: perms}, true
}

// field parses "Key:   N kB".
func field(line []byte) (key string, kb int64, ok bool) {
	k, rest, found := bytes.Cut(line, []byte(":"))
	if !found {
		return "", 0, false
	}
	v := bytes.Fields(rest)
	if len(v) != 2 || string(v[1]) != "kB" {
		return "", 0, false
	}
	n, err := strconv.ParseInt(string(v[0]), 10, 64)
	return string(k), n, err == nil
}
