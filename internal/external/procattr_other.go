//go:build !linux

package external

import "syscall"

// procAttr puts a program in a process group of its own, killed whole on a
// timeout, Close or KillGroups (no parent-death signal outside Linux).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
