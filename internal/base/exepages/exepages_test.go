package exepages

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

const sampleSmaps = `00400000-00ec7000 r-xp 00000000 fe:00 9978269                            /opt/cv (deleted)
Rss:                1408 kB
Private_Dirty:         0 kB
Anonymous:             0 kB
Swap:                  0 kB
00ec7000-01be1000 r--p 00ac7000 fe:00 9978269                            /opt/cv
Rss:                1920 kB
Private_Dirty:         0 kB
Anonymous:             0 kB
01be1000-01cc1000 rw-p 017e1000 fe:00 9978269                            /opt/cv
Rss:                 640 kB
Private_Dirty:       208 kB
Anonymous:           208 kB
01cc1000-01cc2000 r--p 018c1000 fe:00 9978269                            /opt/cv
Rss:                   4 kB
Private_Dirty:         4 kB
Anonymous:             4 kB
01cc3000-01cc4000 r--p 018c3000 fe:00 9978269                            /opt/cv
Rss:                   4 kB
Private_Dirty:         4 kB
Anonymous:             0 kB
01cc2000-01cc3000 r--s 00000000 fe:00 9978269                            /opt/cv
Rss:                   4 kB
7f0000000000-7f0000021000 r-xp 00000000 fe:00 1234                       /usr/lib/libc.so.6
Rss:                 132 kB
7f0000021000-7f0000022000 r-xp 00000000 fe:01 9978269                    /other/fs/same inode
Rss:                 132 kB
Private_Dirty:         0 kB
7f0000100000-7f0000200000 rw-p 00000000 00:00 0
Rss:                1024 kB
Anonymous:          1024 kB
7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]
Rss:                   8 kB
`

// Only the executable's private, read-only mappings without a copied
// (anonymous) page may be dropped: its data, a relocated page, a shared
// mapping and other files' mappings stay; a page dirty in the page cache
// (a binary just built) is still the file's.
func TestCleanMappingsKeepsOnlyTheExecutablesCleanReadOnlyPages(t *testing.T) {
	got, err := cleanMappings(strings.NewReader(sampleSmaps), file{dev: "fe:00", inode: "9978269"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Mapping{{0x400000, 0xec7000, "r-xp"}, {0xec7000, 0x1be1000, "r--p"}, {0x1cc3000, 0x1cc4000, "r--p"}}
	if len(got) != len(want) {
		t.Fatalf("cleanMappings = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("mapping %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// Release drops resident pages of this test binary, and the code it
// dropped still runs: the pages come back from the page cache.
func TestReleaseDropsResidentExecutablePagesAndCodeStillRuns(t *testing.T) {
	before := rssFileKiB(t)
	n, err := Release()
	if err != nil {
		t.Fatal(err)
	}
	if n <= 0 {
		t.Fatalf("Release advised %d bytes, want the executable's code at least", n)
	}
	after := rssFileKiB(t)
	if after >= before {
		t.Fatalf("RssFile %d KiB after Release, %d before: want fewer", after, before)
	}
	// Code and read-only data that were dropped: parsing, formatting.
	if s := strconv.Quote(strings.Repeat("é", 3)); s != `"ééé"` {
		t.Fatalf("Quote after Release = %s", s)
	}
	t.Logf("RssFile %d KiB → %d KiB (%d bytes advised)", before, after, n)
}

func rssFileKiB(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}
