package wire

import "bothy.example.com/server/internal/kernel/config"

// KeyInstanceName is the name the instance row gets when bothy migrate (or bothy serve on the
// embedded default) creates it on an empty database; instance.Setup.Ensure keeps an existing
// instance's name, so changing the key later does not rename it. It is defined here because
// the composition root is where it is read.
var KeyInstanceName = config.Define("instance.name", config.KindString, "bothy",
	"name given to the instance when the first bothy migrate creates it; later changes have no effect")
