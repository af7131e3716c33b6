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

// Watch a running job: a line per step, the alarm's origin at the end;
// Ctrl-C ends the watch (a "stopped" event), not the program.
func ExampleWatch() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := nanhunt.Watch(ctx, nanhunt.WatchInputs{
		Dump:      "./dump_path",
		Log:       nanhunt.LogInputs{Paths: []string{"train.log"}},
		StateFile: "watch.json", // a new watch resumes where this one stopped
	}, func(e nanhunt.WatchEvent) {
		switch e.Kind {
		case "step":
			fmt.Printf("step %d: %s\n", e.Step, e.Status)
		case "warning":
			fmt.Printf("step %d: warning: %s\n", e.Step, e.Message)
		}
	})
	if err != nil {
		log.Fatal(err)
	}
	if v := res.Alarm; v != nil && v.Origin != nil {
		fmt.Printf("ANOMALY at step %d on ranks %v: %s\n", v.Origin.Step, v.Origin.Ranks, v.Origin.Op)
	}
}

// Summarize the rank folders of this node into a folder the nodes share;
// Run joins the summaries of every node.
func ExampleSummarize() {
	res, err := nanhunt.Summarize(context.Background(), nanhunt.SummarizeInputs{Dump: "/local/dump", Output: "/shared/summaries/"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d rank-steps into %s\n", res.Records, res.File)
}
