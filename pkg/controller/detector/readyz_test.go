package detector

import (
	"testing"
)

// TestReadyz: a standby replica (leader election on, not elected) is
// ready with nothing to do; a process that leads from the start (no leader
// election) is ready only once its template informers have synced, even
// before the manager reports it elected.
func TestReadyz(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	cases := map[string]struct {
		leaderElection, elected, synced bool
		wantReady                       bool
	}{
		"standby":                              {leaderElection: true, wantReady: true},
		"elected, listing":                     {leaderElection: true, elected: true},
		"elected, synced":                      {leaderElection: true, elected: true, synced: true, wantReady: true},
		"no leader election, starting":         {},
		"no leader election, synced":           {synced: true, wantReady: true},
		"no leader election, elected, listing": {elected: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := &Detector{opts: Options{LeaderElection: tc.leaderElection}, elected: make(chan struct{})}
			if tc.elected {
				d.elected = closed
			}
			d.ready.Store(tc.synced)
			if err := d.readyz(nil); (err == nil) != tc.wantReady {
				t.Errorf("readyz = %v, want ready %v", err, tc.wantReady)
			}
		})
	}
}
