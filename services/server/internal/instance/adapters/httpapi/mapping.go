package httpapi

import (
	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/instance"
)

// toAPIInstance converts the instance into the InstanceInfo of the API.
func toAPIInstance(info instance.Info) apigen.InstanceInfo {
	return apigen.InstanceInfo{
		Id:        info.ID,
		Name:      info.Name,
		SyncEpoch: info.SyncEpoch,
		Version:   info.Version,
	}
}
