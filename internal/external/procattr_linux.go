package external

import "syscall"

// procAttr puts a program in a process group of its own (killed whole on a
// timeout, Close or KillGroups) and asks Linux to kill it when this process
// ends, however it ends (kill -9 included): Pdeathsig, which Command.start
// makes safe from Go's threads (proc.run). The signal reaches the program
// only; processes it started itself outlive a kill -9 of this process
// unless the program passes the death on (they die with the group on a
// timeout, Close, KillGroups, SIGTERM or SIGINT to optimize).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
