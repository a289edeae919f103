package models

import "fmt"

// errorf formats an error of this package, prefixed "models: ".
func errorf(format string, args ...any) error {
	return fmt.Errorf("models: "+format, args...)
}
