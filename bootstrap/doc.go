// Package bootstrap wires cachegate with go.uber.org/fx. Its subpackages
// hold one fx module each (storefx, cachefx, authfx, httpfx) and the typed
// configuration (config); App assembles them from a config.Config.
//
// Only bootstrap imports fx. Every constructor it wires is plain Go and
// usable without fx.
package bootstrap
