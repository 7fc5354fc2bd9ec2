import heroImg from './assets/hero.png';
import reactLogo from './assets/react.svg';
import viteLogo from './assets/vite.svg';
import { CouponCheck } from './CouponCheck.tsx';

// The template's page (its images: two imported logos, a hero image, the icon sprite in public/) with the README's
// CouponCheck rendered in it.
function App() {
  return (
    <main>
      <header>
        <img src={viteLogo} width="32" height="32" alt="Vite logo" />
        <img src={reactLogo} width="32" height="32" alt="React logo" />
        <img src="/icons.svg" width="32" height="32" alt="" />
        <img src={heroImg} width="48" height="48" alt="" />
      </header>
      <h1>My till</h1>
      <CouponCheck />
    </main>
  );
}

export default App;
