package sqltest

import (
	"database/sql"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// Postgres is a throwaway PostgreSQL server with trust authentication:
// any role name is let in without a password.
type Postgres struct{ server }

// StartPostgres runs initdb on a fresh data directory and starts postgres
// on a free loopback port (or where Listen says). PostgreSQL refuses to run as root: as root it
// runs as the user postgres (which Debian's package creates). A missing
// postgresql is an error: the tests need a real server.
func StartPostgres(opts ...Option) (*Postgres, error) {
	o, err := applyOptions(opts)
	if err != nil {
		return nil, err
	}
	bin, err := pgBin()
	if err != nil {
		return nil, err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("sqltest: postgres refuses root and there is no user postgres: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	dir, err := tempDir(cred)
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := run(cred, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--no-sync", "--no-instructions"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := trustSubnet(data, o.trust); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p := &Postgres{server{name: "postgres", dir: dir, host: o.host, cred: cred}}
	// fsync=off only risks data at a machine crash; Stop's SIGKILL of
	// the server keeps every commit, as a real crash of the server would.
	p.argv = func(port int) []string {
		argv := []string{filepath.Join(bin, "postgres"), "-D", data, "-k", dir, "-p", strconv.Itoa(port),
			"-h", o.host, "-c", "fsync=off",
			"-c", "full_page_writes=off", "-c", "max_connections=200", "-c", "shared_buffers=16MB"}
		for _, kv := range o.settings {
			argv = append(argv, "-c", kv)
		}
		return argv
	}
	p.dial = func(port int) (*sql.DB, error) { return sql.Open("pgx", p.URL("postgres")) }
	if err := p.startFresh(); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// Start starts a stopped server again, once the backends of the killed
// one have gone: each is a session of its own, outside the process group
// Stop kills, and ends only when it notices the postmaster's death; until
// then it keeps the shared memory segment attached and a new postmaster
// refuses to start ("pre-existing shared memory block is still in use").
func (p *Postgres) Start() error {
	if id, ok := p.shmID(); ok {
		var ds unix.SysvShmDesc
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if _, err := unix.SysvShmCtl(id, unix.IPC_STAT, &ds); err != nil || ds.Nattch == 0 {
				break
			}
		}
	}
	return p.server.Start()
}

// shmID is the System V shared memory segment of the last server, from
// postmaster.pid (line 7: "KEY ID").
func (p *Postgres) shmID() (int, bool) {
	b, err := os.ReadFile(filepath.Join(p.dir, "data", "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	if ls := strings.Split(string(b), "\n"); len(ls) > 6 {
		if f := strings.Fields(ls[6]); len(f) == 2 {
			if id, err := strconv.Atoi(f[1]); err == nil {
				return id, true
			}
		}
	}
	return 0, false
}

// Close stops the server, removes the System V shared memory segment a
// killed postgres leaves behind (its key is in postmaster.pid), and
// removes the directory.
func (p *Postgres) Close() {
	p.Stop()
	if id, ok := p.shmID(); ok {
		_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	}
	p.server.Close()
}

// URL is the postgres:// URL of database db, as the superuser.
func (p *Postgres) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable", p.addr(), db)
}

// CreateDB creates database name.
func (p *Postgres) CreateDB(name string) error { return p.Exec(`CREATE DATABASE "` + name + `"`) }

// pgBin is the newest /usr/lib/postgresql/*/bin with initdb.
func pgBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("sqltest: no /usr/lib/postgresql/*/bin/initdb (install postgresql)")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}
