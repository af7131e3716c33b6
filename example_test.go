package nanhunt_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/nanhunt/nanhunt"
)

// Run on a dump, its training logs and the monitor output; Ctrl-C stops
// every reader.
func ExampleRun() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	v, err := nanhunt.Run(ctx, nanhunt.Inputs{
		Dump:    "./dump_path",
		Log:     nanhunt.LogInputs{Paths: []string{"logs/rank*.log"}},
		Monitor: nanhunt.MonitorInputs{Dir: "./monitor_output"},
	})
	if err != nil {
		log.Fatal(err)
	}
	if o := v.Origin; o != nil {
		fmt.Printf("step %d, ranks %v: %s (%s)\n", o.Step, o.Ranks, o.Op, o.Stage)
	}
	if v.Plan != nil {
		cfg, _ := v.Plan.Config.Indented() // the msprobe config.json to collect next
		os.Stdout.Write(cfg)
	}
}
