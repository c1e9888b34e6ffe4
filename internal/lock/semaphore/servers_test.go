package semaphore

// servers are the package's database servers (none yet).
var servers dbServers

type dbServers struct{}

func (dbServers) close() {}

func backendsUnderTest() []backend { return []backend{fileBackend()} }
