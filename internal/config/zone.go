package config

// ZoneName is the zone the job's schedule is read in, as jobs.yaml names
// it; "Local" for the machine's.
func (j Job) ZoneName() string {
	if j.Timezone != "" {
		return j.Timezone
	}
	if j.Location != nil {
		return j.Location.String()
	}
	return "Local"
}
