package remote

import (
	"os"
	"os/exec"
)

// pipeSize is the capacity asked for the pipes to and from the worker (Linux's default
// limit for unprivileged processes, /proc/sys/fs/pipe-max-size). With the default 64
// KB, a 5 MB source crosses in ~80 hand-offs between the processes, each waiting for
// the reader to be scheduled, which on a machine busy transforming cost ~10 ms per
// source; with 1 MB, a few.
const pipeSize = 1 << 20

// pipes is the parent's side of the worker's stdin and stdout, and the child's side,
// which the parent closes once the child has started.
type pipes struct {
	stdin, stdout     *os.File // ours: we write stdin and read stdout
	childIn, childOut *os.File // the child's ends
}

// newPipes makes the pipes, enlarged to pipeSize where the system allows, and
// attaches them to cmd.
func newPipes(cmd *exec.Cmd) (*pipes, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	growPipe(inW)
	growPipe(outR)
	cmd.Stdin, cmd.Stdout = inR, outW
	return &pipes{stdin: inW, stdout: outR, childIn: inR, childOut: outW}, nil
}

// started closes the child's ends in this process (the child has its own copies);
// if the child did not start, it closes ours too.
func (p *pipes) started(ok bool) {
	p.childIn.Close()
	p.childOut.Close()
	if !ok {
		p.stdin.Close()
		p.stdout.Close()
	}
}
