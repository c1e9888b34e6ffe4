package config

// LoadSettingsForReading is LoadForReading of the file's settings alone:
// the state dir, the backends, the defaults, everything but the jobs,
// whose list is left undecoded when it can be cut from the text (see
// split.go) and decoded as usual when it cannot. The Config then has no
// jobs, and the problems are the settings' only. A command that asks a
// running daemon about a few jobs needs no more of a file of a million
// jobs, whose whole parse takes seconds.
func LoadSettingsForReading(path string) (*Config, []Problem) {
	data, problems, ok := read(path)
	if !ok {
		return nil, problems
	}
	return parseForReading(path, data, true)
}
