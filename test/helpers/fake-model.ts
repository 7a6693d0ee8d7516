/** The scripted model lives with `npm run demo`, which shows it to users; the tests use the same one. */
export { type FakeModel, modelsYml, startFakeModel } from "../../scripts/scripted-model.ts";
