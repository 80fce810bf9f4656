package app

import (
	"reflect"
	"testing"
	"time"

	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/remote"
)

// TestImageSetup: every image setting of Config reaches remote.Open.
func TestImageSetup(t *testing.T) {
	c := &Config{ImageWorkers: 1, ImageQueue: 2, ImageMaxPixels: 3, ImageMaxBytes: 4, ImageWorker: "w", ImageWorkerIdle: 5,
		ImageMaxCost: 6, ImageTimeout: 7, ImageUserWorkers: 8, ImageUserQueue: 9, ImageWorkersRemote: "r",
		ImageWorkersSecret: "s", ImageWorkersTLSCA: "ca", ImageWorkersTLSCert: "cert", ImageWorkersTLSKey: "key"}
	log := discard()
	icfg := imaging.DefaultConfig()
	icfg.Workers, icfg.Queue, icfg.MaxSourcePixels, icfg.MaxSourceBytes = 1, 2, 3, 4
	icfg.MaxCost, icfg.Timeout, icfg.UserWorkers, icfg.UserQueue = 6, 7, 8, 9
	want := remote.Setup{Imaging: icfg, Worker: "w", Idle: 5 * time.Nanosecond, Remote: "r", Secret: []byte("s"),
		TLSCA: "ca", TLSCert: "cert", TLSKey: "key", Log: log}
	if got := c.imageSetup(log); !reflect.DeepEqual(got, want) {
		t.Errorf("imageSetup:\n%+v\nwant\n%+v", got, want)
	}
}
